package search

import (
	"slices"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
)

// A page takes a clip from the node's copy only at the version its row
// has now: a change made past the catalog package (an operator's UPDATE,
// which moves no pass) shows on the next page read, on every kind of page,
// and a copy made by one page never lends its similarity to another.
func TestPagesTakeCopiesOnlyAtTheRowsVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pages := []struct {
		name string
		q    Query
	}{
		{"newest", Query{Limit: 100}},
		{"deep by offset", Query{Limit: 2, Offset: 3}},
		{"by price", Query{SortBy: SortPrice, Limit: 100}},
		{"keyword", Query{Search: "woman", Limit: 100}},
		{"semantic", Query{SemanticSearch: "woman laughing in a car", Limit: 100}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			first := f.search(t, p.q).Videos
			if len(first) == 0 {
				t.Fatalf("%s: an empty page tests nothing", p.name)
			}
			// The same page again comes from the copies: the same clips.
			again := f.search(t, p.q).Videos
			if !slices.EqualFunc(first, again, sameClip) {
				t.Fatalf("%s: the second read differs:\n%v\n%v", p.name, first, again)
			}
			// Changed by hand (in what neither matches nor orders these
			// pages), the clip shows its new description at once.
			id := first[0].ID
			desc := "changed " + uuid.NewString()
			if _, err := f.Pool.Exec(f.Ctx, `UPDATE videos SET description = $2 WHERE id = $1`, id, desc); err != nil {
				t.Fatal(err)
			}
			after := f.search(t, p.q).Videos
			i := slices.IndexFunc(after, func(v catalog.Video) bool { return v.ID == id })
			if i < 0 || after[i].Description != desc {
				t.Fatalf("%s: after the UPDATE the page shows %v, want the description %q", p.name, after, desc)
			}
		})
	}

	// The similarity is the page's, never the one of the page that copied
	// the clip.
	a := f.search(t, Query{SemanticSearch: "woman laughing in a car", Limit: 100}).Videos
	b := f.search(t, Query{SemanticSearch: "man at a desk", Limit: 100}).Videos
	differ := false
	for _, va := range a {
		for _, vb := range b {
			if va.ID == vb.ID && *va.Similarity != *vb.Similarity {
				differ = true
			}
		}
	}
	if !differ {
		t.Fatal("two different semantic queries gave every shared clip the same similarity")
	}
	for _, v := range f.search(t, Query{Limit: 100}).Videos {
		if v.Similarity != nil {
			t.Fatalf("%s: a list carries a similarity %v", v.Title, *v.Similarity)
		}
	}
}

func sameClip(a, b catalog.Video) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Description == b.Description && a.Price == b.Price && slices.Equal(a.Tags, b.Tags) &&
		a.CreatedAt.Equal(b.CreatedAt) && (a.Similarity == nil) == (b.Similarity == nil) &&
		(a.Similarity == nil || *a.Similarity == *b.Similarity)
}
