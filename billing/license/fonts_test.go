package license

import (
	"slices"
	"strings"
	"testing"
)

// Every script the certificate test prints is covered; a character no
// font has is named, once.
func TestUnprintable(t *testing.T) {
	f := testFonts(t)
	for _, c := range scriptNames {
		if missing := f.Unprintable(c.name); len(missing) > 0 {
			t.Errorf("%s name %q: unprintable %q", c.script, c.name, missing)
		}
	}
	for _, ok := range []string{"Zoë\u200dStudio", "a\u00a0b", "Ḿ", "דור\u200fא"} {
		if missing := f.Unprintable(ok); len(missing) > 0 {
			t.Errorf("%q: unprintable %q", ok, missing)
		}
	}
	// U+1F600 (an emoji), U+E000 (private use) and U+10FFFD have no glyph in
	// any certificate font.
	if got := f.Unprintable("Acme \U0001F600\U0001F600 \ue000 \U0010FFFD"); !slices.Equal(got, []rune{'\U0001F600', '\ue000', '\U0010FFFD'}) {
		t.Errorf("unprintable: %q", got)
	}
}

// A font directory without the fonts is an error that says what to install.
func TestLoadFontsNamesWhatIsMissing(t *testing.T) {
	_, err := LoadFonts(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "fonts-noto-core") || !strings.Contains(err.Error(), "NotoSans-Regular.ttf") {
		t.Fatalf("LoadFonts of an empty directory: %v", err)
	}
}
