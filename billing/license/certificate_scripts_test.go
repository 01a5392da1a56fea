package license

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// scriptNames are licensee names in the scripts the certificate prints.
var scriptNames = []struct {
	script, name string
	// ligature: the name has a ligature of two letters (Arabic lam-alef),
	// which poppler extracts with its two letters swapped; mixed: it mixes
	// directions, and poppler moves the spaces at their boundaries (see
	// TestCertificatePrintsEveryScript).
	ligature, mixed bool
}{
	{"Japanese", "株式会社ひかり映像", false, false},
	{"Chinese", "北京光影文化传媒", false, false},
	{"Korean", "한빛 스튜디오", false, false},
	{"Arabic", "استوديو النور", false, false},
	{"Arabic with ligatures", "دار السلام للإنتاج الفني", true, false},
	{"Hebrew", "סטודיו אור", false, false},
	{"Hindi", "प्रकाश फ़िल्म्स", false, false},
	{"Thai", "สตูดิโอแสงทอง", false, false},
	{"Greek", "Φωτεινή Ταινίες", false, false},
	{"Cyrillic", "Студия Свет", false, false},
	{"Latin", "Jane <Doe> & Co", false, false},
	{"Hebrew in Latin", "Acme סטודיו אור Ltd", false, true},
}

// pdfText is the text poppler's pdftotext reads from pdf.
func extractText(t testing.TB, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// Every name is read back from the certificate as it was given: the
// glyphs are drawn (no empty Licensee line) and the text stays extractable
// in logical order (the order the name is typed and stored in), which is
// what pdftotext gives for every script here:
//   - left-to-right runs carry their logical text (ActualText), so scripts
//     whose glyphs are reordered or combined (Devanagari, Thai) come back
//     as typed;
//   - right-to-left runs are drawn in visual order with each glyph mapped
//     to its characters (ToUnicode), and poppler reverses such a run into
//     logical order itself (wrapping it in U+202B ... U+202C, which the
//     comparison ignores). A ligature of two letters (lam-alef) is one
//     glyph for two characters, whose order poppler reverses with the rest:
//     for such a name each word must come back with the same letters;
//   - where a line mixes directions, poppler puts the spaces between the
//     runs where its reordering leaves them ("Acme  סטודיו אורLtd"): such a
//     name must come back whole once white space is left out.
func TestCertificatePrintsEveryScript(t *testing.T) {
	k, _ := NewKeyring(secretA)
	for _, c := range scriptNames {
		t.Run(c.script, func(t *testing.T) {
			d := sample()
			name := c.name
			d.Licensee.Name = &name
			s, err := k.Sign(d)
			if err != nil {
				t.Fatal(err)
			}
			pdf, err := certificateForTest(t, s)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.NewReplacer("\u202b", "", "\u202c", "").Replace(norm.NFC.String(extractText(t, pdf)))
			if !strings.Contains(text, "Licensee") || !strings.Contains(text, d.LicenseID) {
				t.Fatalf("the certificate's text lacks its fields:\n%s", text)
			}
			switch {
			case c.ligature:
				words := map[string]bool{}
				for _, w := range strings.Fields(text) {
					words[sortedRunes(w)] = true
				}
				for _, w := range strings.Fields(name) {
					if !words[sortedRunes(w)] {
						t.Errorf("the certificate's text lacks the letters of %q:\n%s", w, text)
					}
				}
			case c.mixed:
				if squeeze := strings.NewReplacer(" ", "", "\n", ""); !strings.Contains(squeeze.Replace(text), squeeze.Replace(name)) {
					t.Errorf("the certificate's text lacks %s name %q:\n%s", c.script, name, text)
				}
			case !strings.Contains(text, name):
				t.Errorf("the certificate's text lacks %s name %q:\n%s", c.script, name, text)
			}
		})
	}
}

func sortedRunes(s string) string {
	rs := []rune(s)
	slices.Sort(rs)
	return string(rs)
}
