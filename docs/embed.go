// Package docs holds the user-facing guides that the API node serves, so
// that the text in the repository and the text at /docs/... never differ.
package docs

import (
	"embed"
	"io/fs"
	"strings"
)

// Migration is the v0 -> v1 migration guide (migration.md), served at
// /docs/migration and linked from every legacy response's Sunset link.
//
//go:embed migration.md
var Migration []byte

// pages are the reference pages the README links to, served at
// /docs/<name> from the same files.
//
//go:embed *.md
var pages embed.FS

// Guide is one reference page: its name in /docs/<name> (the file name
// without .md), its title (the page's first heading) and its Markdown.
type Guide struct {
	Name, Title string
	Text        []byte
}

// Guides returns the reference pages in the order of their file names. The
// migration guide is not among them: it has its own address and handler.
func Guides() []Guide {
	entries, err := fs.ReadDir(pages, ".")
	if err != nil {
		panic("docs: embedded pages unreadable: " + err.Error()) // a broken build
	}
	var out []Guide
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || name == "migration" {
			continue
		}
		text, err := fs.ReadFile(pages, e.Name())
		if err != nil {
			panic("docs: embedded page unreadable: " + err.Error())
		}
		first, _, _ := strings.Cut(string(text), "\n")
		out = append(out, Guide{Name: name, Title: strings.TrimPrefix(first, "# "), Text: text})
	}
	return out
}
