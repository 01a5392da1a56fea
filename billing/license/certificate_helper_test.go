package license

import (
	"sync"
	"testing"
)

// loadTestFonts loads the fonts from the default directory, where the
// project's scripts install them, once for the package's tests (they are
// only read).
var loadTestFonts = sync.OnceValues(func() (*Fonts, error) { return LoadFonts("") })

func testFonts(t testing.TB) *Fonts {
	t.Helper()
	f, err := loadTestFonts()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func certificateForTest(t testing.TB, s Signed) ([]byte, error) {
	t.Helper()
	return Certificate(s, testFonts(t))
}
