// Package displayname is the one rule for the names a third party reads:
// the licensee name printed on licences, the account's display name, and
// the customer labels shown beside purchases. A name is stored as it will
// be shown, so every surface that sets one (REST, the dashboard, brollctl)
// goes through Rule.
package displayname

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"broll/internal/apperr"
)

// MaxLen is the longest name, in characters (after NFC).
const MaxLen = 200

// Printer answers whether a name can be printed: the characters of s it has
// no glyph for (none: printable). The licence certificate's fonts are one.
type Printer interface {
	Unprintable(s string) []rune
}

// Rule checks names; Printer, when set, also refuses a name the printed
// document could not show (a missing glyph is never printed as a blank).
type Rule struct {
	Printer Printer
}

// Name is name as it is stored (white space and invisible characters
// trimmed from its ends, NFC), or a 400 invalid_request naming field. A
// name is 1 to MaxLen characters, holds no control characters and no
// bidirectional embedding, override or isolate (U+202A-U+202E,
// U+2066-U+2069: they make text read other than it is stored, as in
// "Acme\u202egnp.exe"), and is not made only of white space and invisible
// characters. Printable names only pass with a Printer.
func (r Rule) Name(field, name string) (string, error) {
	n, err := Normalize(field, name, true)
	if err != nil || r.Printer == nil {
		return n, err
	}
	if missing := r.Printer.Unprintable(n); len(missing) > 0 {
		return "", apperr.InvalidField(field, "%s holds characters the licence certificate cannot print: %s", field, codePoints(missing))
	}
	return n, nil
}

// Normalize is Name without a Printer; an empty name is "" when not
// required (a filter left out).
func Normalize(field, name string, required bool) (string, error) {
	if !utf8.ValidString(name) {
		return "", apperr.InvalidField(field, "%s must be UTF-8 text", field)
	}
	// Before trimming: the controls are invisible, and trimmed they would
	// pass unseen.
	if i := strings.IndexFunc(name, BidiControl); i >= 0 {
		c, _ := utf8.DecodeRuneInString(name[i:])
		return "", apperr.InvalidField(field, "%s must not hold bidirectional controls (U+202A-U+202E, U+2066-U+2069); found U+%04X", field, c)
	}
	n := norm.NFC.String(strings.TrimFunc(name, Invisible))
	if n == "" {
		if name != "" {
			return "", apperr.InvalidField(field, "%s is required (1-%d characters) and must hold a visible character, not only white space or invisible ones", field, MaxLen)
		}
		if required {
			return "", apperr.InvalidField(field, "%s is required (1-%d characters)", field, MaxLen)
		}
		return "", nil
	}
	if utf8.RuneCountInString(n) > MaxLen {
		return "", apperr.InvalidField(field, "%s must be at most %d characters", field, MaxLen)
	}
	if strings.IndexFunc(n, unicode.IsControl) >= 0 {
		return "", apperr.InvalidField(field, "%s must be printable text without control characters", field)
	}
	if strings.IndexFunc(n, func(c rune) bool { return !Invisible(c) }) < 0 {
		return "", apperr.InvalidField(field, "%s is required (1-%d characters) and must hold a visible character, not only white space or invisible ones", field, MaxLen)
	}
	return n, nil
}

// BidiControl reports whether c is a bidirectional embedding, override or
// isolate (U+202A-U+202E, U+2066-U+2069). The implicit marks (U+200E,
// U+200F, U+061C) are letters' direction only, and stay allowed.
func BidiControl(c rune) bool {
	return (c >= '\u202a' && c <= '\u202e') || (c >= '\u2066' && c <= '\u2069')
}

// Invisible reports whether c shows nothing by itself: Unicode White_Space,
// the default-ignorable code points (zero-width space and joiners U+200B-
// U+200D, word joiner U+2060, the byte order mark U+FEFF, soft hyphen,
// variation selectors, Hangul fillers and the other format characters),
// and the blank Braille pattern U+2800.
func Invisible(c rune) bool {
	return unicode.Is(unicode.White_Space, c) || defaultIgnorable(c) || c == '\u2800'
}

// defaultIgnorable is Unicode's Default_Ignorable_Code_Point (derived, as
// DerivedCoreProperties.txt defines it): Other_Default_Ignorable_Code_Point,
// format characters and variation selectors, less white space, the
// interlinear annotation characters, the Egyptian format controls and the
// prepended concatenation marks.
func defaultIgnorable(c rune) bool {
	if unicode.Is(unicode.White_Space, c) || (c >= '\ufff9' && c <= '\ufffb') || (c >= 0x13430 && c <= 0x1343f) ||
		unicode.Is(unicode.Prepended_Concatenation_Mark, c) {
		return false
	}
	return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, c) || unicode.Is(unicode.Cf, c) ||
		unicode.Is(unicode.Variation_Selector, c)
}

// codePoints names rs for a message: "U+1F600, U+E000".
func codePoints(rs []rune) string {
	parts := make([]string, len(rs))
	for i, c := range rs {
		parts[i] = fmt.Sprintf("U+%04X", c)
	}
	return strings.Join(parts, ", ")
}
