package api

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"broll/internal/apperr"
)

// Every code has a page, every problem's type is that page's absolute URL
// on this service, and each answers 200; /docs links to the list.
func TestErrorPages(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	base := e.cfg.BaseURL()

	t.Run("every code of the error table has a page", func(t *testing.T) {
		readme, err := os.ReadFile("../docs/api.md")
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(readme), "\n## Errors\n")
		if !ok {
			t.Fatal("docs/api.md has no Errors section")
		}
		if end := strings.Index(section, "\n## "); end >= 0 {
			section = section[:end]
		}
		listed := regexp.MustCompile("`([a-z_]+)` \\(|`([a-z_]+)` and|, `([a-z_]+)`").FindAllStringSubmatch(section, -1)
		seen := map[string]bool{}
		for _, m := range listed {
			for _, c := range m[1:] {
				if c != "" && c != "gzip" && c != "identity" {
					seen[c] = true
				}
			}
		}
		for code := range titles {
			if !seen[string(code)] {
				t.Errorf("code %s is not in the Errors section of docs/api.md", code)
			}
			if _, ok := errorDocOf(string(code)); !ok {
				t.Errorf("code %s has no page", code)
			}
		}
		if len(errorDocs) != len(titles) {
			t.Errorf("%d pages for %d codes", len(errorDocs), len(titles))
		}
	})

	t.Run("each type URL answers 200 with its page", func(t *testing.T) {
		for code := range titles {
			typ := problemType(base, code)
			if !strings.HasPrefix(typ, base+"/docs/errors/") {
				t.Fatalf("type %q is not on %s", typ, base)
			}
			r := e.do(t, 0, "GET", strings.TrimPrefix(typ, base), "", nil)
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
				!strings.Contains(string(r.raw), "<code>"+string(code)+"</code>") {
				t.Errorf("%s: %d %s", typ, r.status, r.raw)
			}
		}
	})

	t.Run("a real problem links to its page", func(t *testing.T) {
		r := e.do(t, 0, "GET", "/api/v1/balance", "", nil)
		if r.status != 401 || problemOf(t, r).Type != base+"/docs/errors/"+string(apperr.Unauthorized) {
			t.Fatalf("problem type %q", problemOf(t, r).Type)
		}
		page := e.do(t, 0, "GET", strings.TrimPrefix(problemOf(t, r).Type, base), "", nil)
		if page.status != 200 || !strings.Contains(string(page.raw), "401") {
			t.Fatalf("page of the problem: %d", page.status)
		}
	})

	t.Run("the explorer and the list link the pages", func(t *testing.T) {
		docs := e.do(t, 0, "GET", "/docs", "", nil)
		if !strings.Contains(string(docs.raw), `href="/docs/errors"`) {
			t.Fatal("/docs does not link the error codes")
		}
		list := e.do(t, 0, "GET", "/docs/errors", "", nil)
		for code := range titles {
			if !strings.Contains(string(list.raw), `href="/docs/errors/`+string(code)+`"`) {
				t.Errorf("/docs/errors does not link %s", code)
			}
		}
		if r := e.do(t, 0, "GET", "/docs/errors/no_such_code", "", nil); r.status != 404 {
			t.Fatalf("unknown code: %d", r.status)
		}
	})
}
