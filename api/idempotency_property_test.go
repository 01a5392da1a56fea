package api

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// purchaseModel is what a generated purchase body means: the clips in
// order, the expected total in cents (-1: none) and dry_run.
type purchaseModel struct {
	ids    []string
	cents  int
	dryRun bool
}

func (m purchaseModel) key() string {
	return fmt.Sprintf("%s|%d|%t", strings.Join(m.ids, ","), m.cents, m.dryRun)
}

// bodyGen writes purchase bodies: one meaning, many spellings (member
// order, names in any case or with \u escapes, spacing, UUIDs in capitals,
// amounts with or without decimals, defaults written out or left out), and
// bodies that have no one meaning (a member twice) or an amount the API
// does not read (an exponent, a third decimal).
type bodyGen struct{ r *rand.Rand }

var propertyClips = []string{
	"6f1c2a3e-0b4d-4c5e-9f60-7a8b9c0d1e2f",
	"0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
	"fedcba98-7654-4321-8fed-cba987654321",
}

func (g bodyGen) model() purchaseModel {
	m := purchaseModel{cents: -1, dryRun: g.r.IntN(2) == 0}
	for range 1 + g.r.IntN(3) {
		m.ids = append(m.ids, propertyClips[g.r.IntN(len(propertyClips))]) // repeats included
	}
	if g.r.IntN(3) > 0 {
		m.cents = []int{500, 2500, 2550}[g.r.IntN(3)]
	}
	return m
}

func (g bodyGen) space() string { return []string{"", "", " ", "\n\t", "  "}[g.r.IntN(5)] }

// name spells a member name: letters in any case, some \u-escaped.
func (g bodyGen) name(n string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range n {
		if g.r.IntN(4) == 0 {
			c = unicode.ToUpper(c)
		}
		if g.r.IntN(6) == 0 {
			fmt.Fprintf(&b, `\u%04x`, c)
		} else {
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// amount spells cents in dollars; refused is set when the spelling is one
// the API does not read as an amount (an exponent, a third decimal).
func (g bodyGen) amount(cents int) (s string, refused bool) {
	whole, frac := cents/100, cents%100
	switch g.r.IntN(5) {
	case 0:
		if frac == 0 {
			return fmt.Sprintf("%d", whole), false
		}
		return fmt.Sprintf("%d.%d", whole, frac/10), frac%10 != 0
	case 1:
		return fmt.Sprintf("%d.%02d", whole, frac), false
	case 2:
		return fmt.Sprintf("%d.%02d0", whole, frac), true
	case 3:
		return fmt.Sprintf("%de-2", cents), true
	default:
		return fmt.Sprintf("%d.%02d", whole, frac), false
	}
}

// body spells m; valid is false when the spelling has no one reading or
// the API refuses it.
func (g bodyGen) body(m purchaseModel) (body string, valid bool) {
	valid = true
	var members, names []string
	ids := make([]string, len(m.ids))
	for i, id := range m.ids {
		if g.r.IntN(3) == 0 {
			id = strings.ToUpper(id)
		}
		ids[i] = g.space() + `"` + id + `"` + g.space()
	}
	member := func(name, value string) string {
		names = append(names, name)
		return g.space() + g.name(name) + g.space() + ":" + g.space() + value + g.space()
	}
	members = append(members, member("video_ids", "["+strings.Join(ids, ",")+"]"))
	if m.cents >= 0 {
		a, refused := g.amount(m.cents)
		if refused {
			valid = false
		}
		members = append(members, member("expected_total", a))
	}
	if m.dryRun || g.r.IntN(2) == 0 {
		members = append(members, member("dry_run", fmt.Sprint(m.dryRun)))
	}
	if g.r.IntN(5) == 0 {
		// The same member again, maybe in another case, maybe with the
		// same value: no one reading.
		dup := names[g.r.IntN(len(names))]
		members = append(members, member(dup, map[string]string{
			"video_ids": `["` + propertyClips[g.r.IntN(len(propertyClips))] + `"]`, "expected_total": "5", "dry_run": "true"}[dup]))
		valid = false
	}
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return g.space() + "{" + strings.Join(members, ",") + "}" + g.space(), valid
}

// purchaseFingerprint is what POST /api/v1/broll/purchase does with a body
// before it claims an Idempotency-Key: read it, then take the fingerprint.
func purchaseFingerprint(body []byte) ([]byte, error) {
	req, err := readPurchase(body)
	if err != nil {
		return nil, err
	}
	return requestFingerprint("POST", "/api/v1/broll/purchase", req)
}

// TestFingerprintIsMeaning: for generated pairs of purchase bodies, the
// Idempotency-Key fingerprints are equal exactly when the bodies mean the
// same purchase, and a body refused as invalid gets none.
func TestFingerprintIsMeaning(t *testing.T) {
	t.Parallel()
	g := bodyGen{r: rand.New(rand.NewPCG(38, 1))}
	const pairs = 20000
	var same, differ, refused int
	for range pairs {
		ma := g.model()
		mb := ma
		if g.r.IntN(2) == 0 {
			mb = g.model()
		}
		a, aValid := g.body(ma)
		b, bValid := g.body(mb)
		fa, errA := purchaseFingerprint([]byte(a))
		fb, errB := purchaseFingerprint([]byte(b))
		if (errA == nil) != aValid || (errB == nil) != bValid {
			t.Fatalf("validity: %s -> %v (want valid=%t); %s -> %v (want valid=%t)", a, errA, aValid, b, errB, bValid)
		}
		if !aValid || !bValid {
			refused++
			continue
		}
		if bytes.Equal(fa, fb) != (ma.key() == mb.key()) {
			t.Fatalf("same fingerprint %t, same request %t:\n%s\n%s", bytes.Equal(fa, fb), ma.key() == mb.key(), a, b)
		}
		if ma.key() == mb.key() {
			same++
		} else {
			differ++
		}
	}
	if same < pairs/10 || differ < pairs/10 || refused < pairs/10 {
		t.Fatalf("generator too narrow: %d same, %d different, %d refused", same, differ, refused)
	}
}
