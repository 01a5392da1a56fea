package api

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"broll/docs"
)

// The guides of docs/ are served at /docs/<name> exactly as the repository
// holds them, the explorer links each one, and the document lists them.
func TestGuidePages(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	guides := docs.Guides()
	if len(guides) == 0 {
		t.Fatal("no guides embedded")
	}
	explorer := e.do(t, 0, "GET", "/docs", "", nil)

	for _, g := range guides {
		t.Run(g.Name, func(t *testing.T) {
			file, err := os.ReadFile("../docs/" + g.Name + ".md")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(explorer.raw), `href="/docs/`+g.Name+`"`) {
				t.Errorf("/docs does not link /docs/%s", g.Name)
			}
			md := e.send(t, 0, "GET", "/docs/"+g.Name, nil, nil)
			if md.status != 200 || !strings.HasPrefix(md.header.Get("Content-Type"), "text/markdown") || !bytes.Equal(md.raw, file) {
				t.Errorf("markdown: %d %q, %d bytes for a file of %d", md.status, md.header.Get("Content-Type"), len(md.raw), len(file))
			}
			page := e.send(t, 0, "GET", "/docs/"+g.Name, map[string]string{"Accept": "text/html,*/*;q=0.8"}, nil)
			if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
				page.header.Get("Content-Security-Policy") != "default-src 'none'; style-src 'unsafe-inline'" ||
				strings.Contains(string(page.raw), "<script") || !strings.Contains(string(page.raw), "<title>"+g.Title+"</title>") {
				t.Errorf("html: %d %q %q", page.status, page.header.Get("Content-Type"), page.header.Get("Content-Security-Policy"))
			}
		})
	}

	t.Run("an unknown guide is 404 and the fixed /docs paths keep their pages", func(t *testing.T) {
		if r := e.do(t, 0, "GET", "/docs/no_such_guide", "", nil); r.status != 404 || problemOf(t, r).Code != "not_found" {
			t.Errorf("unknown guide: %d %s", r.status, r.raw)
		}
		if r := e.do(t, 0, "GET", "/docs/errors", "", nil); r.status != 200 || !strings.Contains(string(r.raw), `href="/docs/errors/`) {
			t.Errorf("/docs/errors: %d", r.status)
		}
		if r := e.send(t, 0, "GET", "/docs/migration", nil, nil); r.status != 200 || !bytes.Equal(r.raw, docs.Migration) {
			t.Errorf("/docs/migration: %d", r.status)
		}
	})

	t.Run("the document names every guide", func(t *testing.T) {
		doc, _ := loadOpenAPI(t)
		item := doc.Paths.Value("/docs/{guide}")
		if item == nil || item.Get == nil || len(item.Get.Parameters) != 1 {
			t.Fatal("api/openapi.json has no GET /docs/{guide} with its parameter")
		}
		var listed []string
		for _, v := range item.Get.Parameters[0].Value.Schema.Value.Enum {
			listed = append(listed, v.(string))
		}
		var names []string
		for _, g := range guides {
			names = append(names, g.Name)
		}
		if !slices.Equal(listed, names) {
			t.Errorf("the document lists %v, the service serves %v", listed, names)
		}
	})
}
