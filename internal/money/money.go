// Package money converts between integer cents, used everywhere inside, and
// dollar amounts at the edges (JSON numbers, CLI arguments).
package money

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Cents is an amount of US cents.
type Cents int64

// MaxCents bounds any single amount a client or operator may name
// (ten million dollars), far from int64 overflow.
const MaxCents Cents = 10_000_000_00

// ParseDollars reads a non-negative dollar amount with at most two decimals:
// "5", "12.5", "12.50". Anything else is an error, never a rounding.
func ParseDollars(s string) (Cents, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("amount is empty")
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || strings.TrimLeft(whole, "0123456789") != "" ||
		(hasFrac && (frac == "" || len(frac) > 2 || strings.TrimLeft(frac, "0123456789") != "")) {
		return 0, fmt.Errorf("%q is not a dollar amount (examples: 5, 12.5, 12.50)", s)
	}
	if len(whole) > 10 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	var f int64
	if hasFrac {
		if len(frac) == 1 {
			frac += "0"
		}
		f, _ = strconv.ParseInt(frac, 10, 64)
	}
	c := Cents(w*100 + f)
	if c > MaxCents {
		return 0, fmt.Errorf("%q is too large (at most %s)", s, MaxCents)
	}
	return c, nil
}

// String renders dollars with two decimals: "12.50".
func (c Cents) String() string {
	sign := ""
	v := int64(c)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON writes the amount as a JSON number of dollars, exact to the cent.
func (c Cents) MarshalJSON() ([]byte, error) {
	return []byte(c.String()), nil
}

// UnmarshalJSON reads a JSON number of dollars.
func (c *Cents) UnmarshalJSON(b []byte) error {
	var n json.Number
	if len(b) == 0 || b[0] == '"' {
		return fmt.Errorf("amount must be a number")
	}
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("amount must be a number")
	}
	v, err := ParseDollars(n.String())
	if err != nil {
		return err
	}
	*c = v
	return nil
}
