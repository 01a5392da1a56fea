package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// page is one Markdown file of the documentation: its links and the anchors
// its headings make.
type page struct {
	links   []string
	anchors map[string]bool
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6} (.+)$`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped, spaces turned into hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readPage reads a Markdown file, skipping fenced code, where a "# " line is
// a shell comment and brackets are code.
func readPage(t *testing.T, path string) page {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			p.links = append(p.links, m[1])
		}
	}
	return p
}

// TestLinksResolve: every relative link of README.md and docs/*.md names a
// file of the repository and, with a #fragment into a Markdown page, one of
// that page's headings, so a moved or renamed section breaks this test
// instead of a reader's click.
func TestLinksResolve(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	// The dated performance history (docs/history) is linked to and links
	// back, so its links are checked too.
	history, err := filepath.Glob("history/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, history...)
	files = append(files, "../README.md")
	pages := map[string]page{}
	for _, f := range files {
		pages[filepath.Clean(f)] = readPage(t, f)
	}
	checked := 0
	for from, p := range pages {
		for _, link := range p.links {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			file := from
			if target != "" {
				file = filepath.Clean(filepath.Join(filepath.Dir(from), target))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: link %s: no file %s", from, link, file)
				continue
			}
			checked++
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			to, ok := pages[file]
			if !ok {
				to = readPage(t, file)
			}
			if !to.anchors[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", from, link, file, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links checked")
	}
}

// TestReadmeLinksEveryPage: each guide in docs/ is linked from README.md, so
// a newcomer can reach every page from the first one.
func TestReadmeLinksEveryPage(t *testing.T) {
	readme := readPage(t, "../README.md")
	linked := map[string]bool{}
	for _, l := range readme.links {
		target, _, _ := strings.Cut(l, "#")
		linked[filepath.Clean(target)] = true
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !linked[filepath.Join("docs", f)] {
			t.Errorf("README.md does not link docs/%s", f)
		}
	}
}
