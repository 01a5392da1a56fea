// Package graphtest opens service graphs for tests, over the test's own
// database and Redis, as the composition root opens them for processes:
// test factories and set-ups build no service of their own.
package wiringtest

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/billing/license"
	"broll/internal/config"
	"broll/wiring"
)

// Open opens the services cfg and o describe and closes it when the test ends.
// With the Fonts part and no o.Fonts, the graph shares the test binary's
// fonts (Fonts).
func Open(t testing.TB, cfg config.Config, o wiring.Options) *wiring.Services {
	t.Helper()
	if o.Parts&wiring.Fonts != 0 && o.Fonts == nil {
		o.Fonts = Fonts(t)
	}
	g, err := wiring.Open(context.Background(), cfg, o)
	if err != nil {
		t.Fatalf("open the services: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// loadFonts loads the certificate fonts from the default directory once per
// test binary: loading them takes a tenth of a second, and graphs only read
// them, so every set of services of a test binary shares one set.
var loadFonts = sync.OnceValues(func() (*license.Fonts, error) { return license.LoadFonts(config.Defaults().License.FontDir) })

// Fonts are the certificate fonts, as a node loads them at start.
func Fonts(t testing.TB) *license.Fonts {
	t.Helper()
	f, err := loadFonts()
	if err != nil {
		t.Fatalf("certificate fonts: %v", err)
	}
	return f
}

// Over is the set of services that need only pool (tenancy, billing
// without download links, the catalog without media or queue) under the
// default configuration: what test factories make accounts, keys and
// clips with.
func Over(t testing.TB, pool *pgxpool.Pool) *wiring.Services {
	t.Helper()
	return Open(t, config.Defaults(), wiring.Options{Pool: pool})
}
