package license

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/harfbuzz"
	tdfont "github.com/tdewolff/font"
)

// DefaultFontDir is where Debian's font packages put their TrueType files
// (BROLL_CERTIFICATE_FONT_DIR's default).
const DefaultFontDir = "/usr/share/fonts/truetype"

// The certificate's typefaces, relative to the font directory, in the
// order a character's face is looked for: Noto Sans (Latin, Greek,
// Cyrillic) and Noto's face of each script (Debian's fonts-noto-core), then
// Nanum Gothic for Korean (fonts-nanum) and Droid Sans Fallback for Chinese
// and Japanese (fonts-droid-fallback).
// Each is a TrueType font, which a PDF embeds as a subset of the glyphs used.
var (
	regularFiles = []string{
		"noto/NotoSans-Regular.ttf",
		"noto/NotoSansArabic-Regular.ttf",
		"noto/NotoSansHebrew-Regular.ttf",
		"noto/NotoSansDevanagari-Regular.ttf",
		"noto/NotoSansBengali-Regular.ttf",
		"noto/NotoSansGurmukhi-Regular.ttf",
		"noto/NotoSansGujarati-Regular.ttf",
		"noto/NotoSansOriya-Regular.ttf",
		"noto/NotoSansTamil-Regular.ttf",
		"noto/NotoSansTelugu-Regular.ttf",
		"noto/NotoSansKannada-Regular.ttf",
		"noto/NotoSansMalayalam-Regular.ttf",
		"noto/NotoSansSinhala-Regular.ttf",
		"noto/NotoSansThai-Regular.ttf",
		"noto/NotoSansLao-Regular.ttf",
		"noto/NotoSansKhmer-Regular.ttf",
		"noto/NotoSansMyanmar-Regular.ttf",
		"noto/NotoSansGeorgian-Regular.ttf",
		"noto/NotoSansArmenian-Regular.ttf",
		"noto/NotoSansEthiopic-Regular.ttf",
		"noto/NotoSansThaana-Regular.ttf",
		"noto/NotoSansSyriac-Regular.ttf",
		"noto/NotoSerifTibetan-Regular.ttf",
		"nanum/NanumGothic.ttf",
		"droid/DroidSansFallbackFull.ttf",
	}
	// Bold is for the certificate's own headings and labels; a character
	// Noto Sans Bold lacks falls back to the regular faces.
	boldFiles = []string{"noto/NotoSans-Bold.ttf"}
)

// FontFiles are the font files LoadFonts reads, relative to its directory:
// what an image must hold (deploy/Dockerfile copies them).
func FontFiles() []string {
	return append(slices.Clone(regularFiles), boldFiles...)
}

// Fonts are the typefaces certificates are printed with, loaded once at
// start and shared: their parsed tables are only read.
type Fonts struct {
	regular, bold []*typeface
}

// typeface is one font file: parsed at load for its character map and
// for subsetting into a PDF (tdewolff/font, small), and for shaping
// (go-text/typesetting, which holds its outlines parsed: 13 to 17 MB for
// a CJK font) on first use, so that a node that never prints a name in a
// script keeps that font's file only.
type typeface struct {
	name string // its file's base name, the PDF's BaseFont after the subset tag
	// mu keeps sfnt's use one at a time, as the parser does not promise
	// more.
	mu   sync.Mutex
	sfnt *tdfont.SFNT
	// shaping parses the font for HarfBuzz once; a *font.Font is safe for
	// concurrent use.
	shaping func() (*font.Font, error)
}

// LoadFonts reads the certificate's fonts from dir (BROLL_CERTIFICATE_FONT_DIR;
// "" is DefaultFontDir). A missing or unreadable file is an error that
// names it and the packages that install it, so that a node does not start
// unable to print a certificate.
func LoadFonts(dir string) (*Fonts, error) {
	if dir == "" {
		dir = DefaultFontDir
	}
	f := &Fonts{}
	for _, set := range []struct {
		files []string
		into  *[]*typeface
	}{{regularFiles, &f.regular}, {boldFiles, &f.bold}} {
		for _, name := range set.files {
			tf, err := loadTypeface(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("certificate fonts (BROLL_CERTIFICATE_FONT_DIR=%s; Debian packages fonts-noto-core, fonts-nanum and fonts-droid-fallback): %w", dir, err)
			}
			*set.into = append(*set.into, tf)
		}
	}
	f.bold = append(f.bold, f.regular...)
	return f, nil
}

func loadTypeface(path string) (*typeface, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sfnt, err := tdfont.ParseSFNT(b, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !sfnt.IsTrueType {
		return nil, fmt.Errorf("%s: not a TrueType font", path)
	}
	return &typeface{name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), sfnt: sfnt,
		shaping: sync.OnceValues(func() (*font.Font, error) {
			face, err := font.ParseTTF(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("certificate font %s: %w", path, err)
			}
			return face.Font, nil
		})}, nil
}

// has reports whether the font has a glyph for r.
func (tf *typeface) has(r rune) bool {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	return tf.sfnt.GlyphIndex(r) != 0
}

// Unprintable returns the characters of s that no certificate font has a
// glyph for, each once, in order: a name holding any would print with a
// missing glyph, so the names a certificate shows are refused when they are
// set. Characters that are never drawn (default-ignorable ones such as the
// zero-width joiner, controls, spaces, which shaping draws as a space) need
// no glyph.
func (f *Fonts) Unprintable(s string) []rune {
	var missing []rune
	for _, r := range s {
		if !f.printable(r) && !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	return missing
}

func (f *Fonts) printable(r rune) bool {
	if harfbuzz.IsDefaultIgnorable(r) || unicode.IsControl(r) || unicode.Is(unicode.Zs, r) {
		return true
	}
	for _, tf := range f.regular {
		if tf.has(r) {
			return true
		}
	}
	return false
}
