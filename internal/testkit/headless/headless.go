// Package headless drives a headless Chromium for the tests that look at a
// page as a person would (the account dashboard, the licence pages,
// Jaeger's trace view) and writes their screenshots.
package headless

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// Find is the path of the Chromium (or Chrome) on PATH, "" when there is
// none; `make chromium` installs Debian's.
func Find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NewTab starts a headless Chromium at 1280x900 for the life of ctx and
// returns a tab in it. The browser resolves no name but 127.0.0.1: a page
// under test must need no CDN or outside font.
func NewTab(ctx context.Context, chromium string) (context.Context, context.CancelFunc) {
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	return tab, func() { cancelTab(); cancelAlloc() }
}

// Root is the repository's root: the directory holding go.mod above the
// test's working directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Shots saves full-page screenshots under .artifacts/screenshots/ at the
// repository's root (git-ignored), and copies chosen ones into docs/.
type Shots struct {
	root, prefix string
	files        map[string]string
}

// NewShots saves screenshots named prefix+name+".png".
func NewShots(t testing.TB, prefix string) *Shots {
	t.Helper()
	root := Root(t)
	if err := os.MkdirAll(filepath.Join(root, ".artifacts", "screenshots"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Shots{root: root, prefix: prefix, files: map[string]string{}}
}

// Take saves the tab's whole page as name.
func (s *Shots) Take(t testing.TB, tab context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(s.root, ".artifacts", "screenshots", s.prefix+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	s.files[name] = path
	t.Logf("screenshot %s", path)
}

// ToDocs copies the screenshots taken under each name to docs/ under the
// file name it maps to.
func (s *Shots) ToDocs(t testing.TB, names map[string]string) {
	t.Helper()
	for name, file := range names {
		b, err := os.ReadFile(s.files[name])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.root, "docs", file), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/%s", file)
	}
}

// PDF saves the first page of a PDF, rendered by pdftoppm at 80 dpi, as
// name.
func (s *Shots) PDF(t testing.TB, name string, pdf []byte) {
	t.Helper()
	base := filepath.Join(s.root, ".artifacts", "screenshots", s.prefix+name)
	cmd := exec.Command("pdftoppm", "-png", "-r", "80", "-singlefile", "-", base)
	cmd.Stdin = bytes.NewReader(pdf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	s.files[name] = base + ".png"
	t.Logf("screenshot %s.png", base)
}
