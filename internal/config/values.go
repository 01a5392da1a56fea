package config

import (
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"

	"broll/internal/money"
)

// Origins are browser origins in the form browsers send in the Origin
// header: lower-case scheme and host, no trailing slash.
type Origins []string

// parsers read each type a setting may have; their errors name the value
// and what was expected (parse puts the variable in front). Lists have
// their entries trimmed and the empty ones dropped.
func parsers() map[reflect.Type]func(string) (any, error) {
	int64s := func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }
	floats := func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }
	date := func(v string) (time.Time, error) { return time.Parse(time.DateOnly, v) }
	origin := func(o string) string { return strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/")) }
	return map[reflect.Type]func(string) (any, error){
		reflect.TypeFor[string]():         func(v string) (any, error) { return v, nil },
		reflect.TypeFor[Secret]():         func(v string) (any, error) { return Secret(v), nil },
		reflect.TypeFor[int]():            parser("a whole number", strconv.Atoi),
		reflect.TypeFor[int64]():          parser("a whole number", int64s),
		reflect.TypeFor[float64]():        parser("a number", floats),
		reflect.TypeFor[bool]():           parser("true or false", strconv.ParseBool),
		reflect.TypeFor[time.Duration]():  parser("a duration (examples: 30s, 1h)", time.ParseDuration),
		reflect.TypeFor[time.Time]():      parser("a date (YYYY-MM-DD)", date),
		reflect.TypeFor[money.Cents]():    parser("an amount in dollars (example: 10.00)", money.ParseDollars),
		reflect.TypeFor[[]string]():       func(v string) (any, error) { return splitList(v, strings.TrimSpace), nil },
		reflect.TypeFor[Origins]():        func(v string) (any, error) { return Origins(splitList(v, origin)), nil },
		reflect.TypeFor[[]netip.Prefix](): func(v string) (any, error) { return parsePrefixes(v) },
	}
}

// parser wraps a parse function so that its error names the value and what
// was expected.
func parser[T any](what string, parse func(string) (T, error)) func(string) (any, error) {
	return func(v string) (any, error) {
		x, err := parse(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not %s", v, what)
		}
		return x, nil
	}
}

// splitList reads a comma-separated list: each entry passed through norm
// and dropped when that leaves it empty.
func splitList(v string, norm func(string) string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = norm(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parsePrefixes reads comma-separated addresses (a single host) and CIDR
// ranges.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range splitList(v, strings.TrimSpace) {
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
