package displayname

import (
	"errors"
	"strings"
	"testing"

	"broll/internal/apperr"
)

// fieldOf is the field a 400 names ("" for another error or none).
func fieldOf(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Code == apperr.Invalid {
		return e.Field
	}
	return ""
}

// Names in any script pass, stored trimmed and in NFC.
func TestValidNames(t *testing.T) {
	for in, want := range map[string]string{
		"Jane Doe Studio":                   "Jane Doe Studio",
		"  株式会社ひかり映像 ":                      "株式会社ひかり映像",
		"北京光影文化传媒":                          "北京光影文化传媒",
		"한빛 스튜디오":                           "한빛 스튜디오",
		"استوديو النور":                     "استوديو النور",
		"סטודיו אור":                        "סטודיו אור",
		"प्रकाश फ़िल्म्स":                   "प्रकाश फ़िल्म्स",
		"สตูดิโอแสงทอง":                     "สตูดิโอแสงทอง",
		"Φωτεινή Ταινίες":                   "Φωτεινή Ταινίες",
		"Студия Свет":                       "Студия Свет",
		"Zoe\u0308 Films":                   "Zoë Films",         // NFC composes e + U+0308
		"\u212bngstr\u00f6m":                "Ångström",          // U+212B (Angstrom sign) is U+00C5 in NFC
		"\u200bAcme\ufeff":                  "Acme",              // invisible at the ends is trimmed
		"می\u200cخواهم":                     "می\u200cخواهم",     // ZWNJ inside a Persian word stays
		"Acme \u200fStudio":                 "Acme \u200fStudio", // an implicit mark is not a control
		"a" + strings.Repeat("b", MaxLen-1): "a" + strings.Repeat("b", MaxLen-1),
	} {
		got, err := Rule{}.Name("licensee_name", in)
		if err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Bidirectional controls, names of nothing visible, control characters
// and over-long names are 400 naming the field.
func TestRefusedNames(t *testing.T) {
	for _, in := range []string{
		"Acme\u202egnp.exe", // right-to-left override
		"\u202aAcme",        // embedding
		"Acme\u202c",        // pop, even at the end (it would be trimmed unseen)
		"\u2066Acme\u2069",  // isolates
		"Acme \u2067x",
		"\u2068",
		"\u200b\u200b\u200b",             // zero-width spaces only
		"\u200c\u200d\u2060\ufeff",       // joiners, word joiner, BOM only
		"\u00ad\ufe0f",                   // soft hyphen, variation selector
		"   ",                            // white space only
		"\u00a0\u3000\u2003\t",           // other white space
		"\u3164\u115f",                   // Hangul fillers
		"\u2800",                         // blank Braille pattern
		"",                               // nothing
		"Acme\x00Films", "Acme\x1bFilms", // control characters
		"\xff\xfe",                    // not UTF-8
		strings.Repeat("x", MaxLen+1), // too long
	} {
		got, err := Rule{}.Name("licensee_name", in)
		if fieldOf(err) != "licensee_name" {
			t.Errorf("Name(%q) = %q, %v; want 400 naming licensee_name", in, got, err)
		}
	}
}

// A name not required may be empty; given, it follows the rule.
func TestNormalizeOptional(t *testing.T) {
	if got, err := Normalize("customer_label", "  ", false); fieldOf(err) != "customer_label" {
		t.Errorf("white space only: %q, %v", got, err)
	}
	if got, err := Normalize("customer_label", "", false); err != nil || got != "" {
		t.Errorf("empty: %q, %v", got, err)
	}
}

type printer map[rune]bool // the runes it cannot print

func (p printer) Unprintable(s string) []rune {
	var out []rune
	for _, r := range s {
		if p[r] {
			out = append(out, r)
		}
	}
	return out
}

// With a Printer, a name it cannot print is refused, naming the field and
// the characters.
func TestPrinter(t *testing.T) {
	r := Rule{Printer: printer{'\U0001F600': true}}
	if _, err := r.Name("licensee_name", "Acme \U0001F600"); fieldOf(err) != "licensee_name" || !strings.Contains(err.Error(), "U+1F600") {
		t.Errorf("unprintable: %v", err)
	}
	if got, err := r.Name("licensee_name", "Acme"); err != nil || got != "Acme" {
		t.Errorf("printable: %q, %v", got, err)
	}
}
