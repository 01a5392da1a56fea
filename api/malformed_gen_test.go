package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// badReq is one generated request. Every request the generator makes is
// malformed or harmless on purpose: none may buy, create, revoke or import.
type badReq struct {
	kind   string // generator name, for failure reports
	method string
	path   string // path and raw query, sent as written
	header map[string]string
	body   []byte
}

// fixture is what the generator aims at: real keys, videos and a real
// download link, so that requests get past authentication and id lookups
// and reach the parsers behind them.
type fixture struct {
	rootKey, custKey, opsKey string
	legacySecret, source     string
	videos                   []uuid.UUID
	downloadPath             string // a valid signed link of a real purchase
	collection               string // the id of a real collection of the customer key, holding the clips
}

// gen draws malformed requests from a seeded source, so that a failure
// reproduces with the same seed.
type gen struct {
	r *rand.Rand
	f fixture
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }

// Hostile scalar values, as they would arrive in a query string or a JSON
// string: invalid UTF-8, NUL, huge and negative numbers, injections.
var (
	hugeNumbers = []string{"1e400", "-1e400", "9223372036854775808", "9223372036854775807", "-9223372036854775809",
		"18446744073709551616", "-1", "0", "-0", "NaN", "Infinity", "-Infinity", "0x10", "1.5", "1_000", " 5", "+5",
		"", "٣", "99999999999999999999999999999999", "1e-400", "4294967296", "2147483648", "00000000000000000001", "5 ",
		"1,5", "½"}
	hostileStrings = []string{"\xff", "\xc3\x28", "\xed\xa0\x80", "a\x00b", "\x00", "\u202eevil", "😀😀", "%", "%%", "%zz",
		"' OR 1=1 --", `"; DROP TABLE videos; --`, "\\", `"`, "'", "<script>", "../../etc/passwd", "\t\n", " ",
		"a:* & b", "!(", "&&", "|", "laugh:*", "(", "\"unclosed", "or", "-", "--", "!!", "::", "\u0130", "ǅ", "ﬀ",
		"\u00ad", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "日本語", "a\ufffdb", "\x7f", "\r\n", "\u2028"}
	jsonJunk = []string{`null`, `true`, `false`, `0`, `-1`, `1e400`, `-1e400`, `9223372036854775808`, `1.5`, `""`,
		`"x"`, `[]`, `{}`, `[1,2]`, `{"a":1}`, `[null]`, `[[]]`, `"\u0000"`, `"\ud800"`, "\"\xff\xfe\"", `[{}]`,
		`{"$ne":1}`, `[true]`}
)

func (g *gen) number() string { return g.pick(hugeNumbers) }

// text returns a hostile string, sometimes long, sometimes glued to a word.
func (g *gen) text() string {
	switch g.r.IntN(6) {
	case 0:
		return strings.Repeat(g.pick([]string{"a", "é", "\xff", "😀", " ", "%"}), 900+g.r.IntN(1200))
	case 1:
		return "laugh" + g.pick(hostileStrings) + "car"
	case 2:
		// Random runes from the whole Unicode range, valid or not.
		var b strings.Builder
		for range 1 + g.r.IntN(12) {
			b.WriteRune(rune(g.r.IntN(0x110000)))
		}
		return b.String()
	default:
		return g.pick(hostileStrings)
	}
}

// uuid is a well-formed version 4 id drawn from the seeded source; the
// chance of it naming a real clip or key is nil.
func (g *gen) uuid() uuid.UUID {
	var u uuid.UUID
	for i := range u {
		u[i] = byte(g.r.Uint32())
	}
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	return u
}

// badID is anything but a known id: malformed, or a well-formed unknown one.
func (g *gen) badID() string {
	u := g.uuid()
	switch g.r.IntN(10) {
	case 0:
		return u.String() // unknown: 404
	case 1:
		return "{" + u.String() + "}"
	case 2:
		return strings.ToUpper(u.String()) + "0"
	case 3:
		s := []byte(u.String())
		junk := "gz-{}\xff\x00 "
		s[g.r.IntN(len(s))] = junk[g.r.IntN(len(junk))]
		return string(s)
	case 4:
		return g.number()
	default:
		return g.text()
	}
}

// esc percent-encodes a value (invalid UTF-8 and NUL become %FF and %00),
// or, now and then, leaves it raw so that bad escapes reach the parser.
func (g *gen) esc(v string) string {
	enc := url.QueryEscape
	if g.chance(0.1) {
		enc = func(v string) string {
			return strings.NewReplacer(" ", "%20", "#", "%23", "&", "%26").Replace(strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f || r > 0x7e {
					return -1
				}
				return r
			}, v))
		}
	}
	return enc(fit(v, 1200, enc))
}

// maxHead keeps a request's line and headers under fasthttp's 4 KB read
// buffer. A longer head is refused before routing, and the refusal races
// the client still writing: the connection resets and nothing is learnt.
const maxHead = 3500

// fit shortens v until its encoded form has at most n bytes.
func fit(v string, n int, enc func(string) string) string {
	for len(enc(v)) > n {
		v = v[:len(v)/2]
	}
	return v
}

// pathID is a bad id as a path segment, short enough for the head.
func (g *gen) pathID() string { return url.PathEscape(fit(g.badID(), 1500, url.PathEscape)) }

// query builds a query string from known parameter names (some repeated)
// with hostile values, plus the odd unknown or valueless parameter.
func (g *gen) query(names []string, keep map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keep)) {
		parts = append(parts, k+"="+g.esc(keep[k]))
	}
	for range 1 + g.r.IntN(4) {
		name := g.pick(names)
		var v string
		switch g.r.IntN(3) {
		case 0:
			v = g.number()
		case 1:
			v = g.text()
		default:
			v = g.badID()
		}
		parts = append(parts, name+"="+g.esc(v))
		if g.chance(0.2) { // the same parameter twice
			parts = append(parts, name+"="+g.esc(g.number()))
		}
	}
	switch g.r.IntN(8) {
	case 0:
		parts = append(parts, g.pick(names)) // no "=" at all
	case 1:
		parts = append(parts, g.esc(g.text())+"="+g.esc(g.text()))
	case 2:
		parts = append(parts, "&&=&")
	}
	if g.chance(0.05) {
		// Just over the longest search text allowed.
		parts = append(parts, "search="+strings.Repeat("a", 1001+g.r.IntN(100)))
	}
	g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	for len(parts) > 1 && len(strings.Join(parts, "&")) > maxHead-500 {
		parts = parts[1:]
	}
	return "?" + strings.Join(parts, "&")
}

var (
	catalogParams = []string{"emotion", "gender", "age_range", "location", "media_type", "orientation", "difficulty",
		"model_id", "min_duration", "max_duration", "min_virality", "owned", "search", "semantic_search", "sort_by",
		"sort_order", "limit", "page", "offset"}
	purchaseListParams = []string{"start_date", "end_date", "search", "semantic_search", "emotion", "api_key_id",
		"limit", "page", "offset"}
	legacyListParams = []string{"customer_email", "start_date", "end_date", "limit", "page", "offset"}
)

// deep is nested JSON arrays or objects, deeper than any decoder allows.
func (g *gen) deep() string {
	n := 5000 + g.r.IntN(100_000)
	if g.chance(0.5) {
		return strings.Repeat("[", n) + strings.Repeat("]", n)
	}
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// jsonString is a JSON string literal of a hostile text, escaped or, now
// and then, with its raw bytes (invalid UTF-8 straight in the body).
func (g *gen) jsonString() string {
	s := g.text()
	switch g.r.IntN(5) {
	case 0:
		return `"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`, "\n", `\n`).Replace(s) + `"`
	case 1:
		return fmt.Sprintf("%q", s) // Go escapes: \x.. is invalid JSON, \u.. is valid
	default:
		raw, _ := json.Marshal(s) // valid JSON: NUL as \u0000, bad bytes as \ufffd
		return string(raw)
	}
}

func (g *gen) jsonValue() string {
	switch g.r.IntN(5) {
	case 0:
		return g.jsonString()
	case 1:
		return g.number()
	case 2:
		if g.chance(0.1) {
			return g.deep()
		}
		fallthrough
	default:
		return g.pick(jsonJunk)
	}
}

func (g *gen) realIDs() []string {
	var out []string
	for _, v := range g.f.videos[:1+g.r.IntN(len(g.f.videos))] {
		out = append(out, `"`+v.String()+`"`)
	}
	return out
}
