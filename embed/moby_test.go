package embed

import (
	"bytes"
	"compress/gzip"
	"slices"
	"testing"
)

// Idioms and words that neither the vocabulary, its thesaurus nor
// WordNet joins to a mood reach it through their Moby synonyms, in a
// query; nothing else weighs as much.
func TestBuiltinMobyJoinsQueryWords(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	for _, tc := range []struct {
		query    string
		concepts []string
	}{
		{"in seventh heaven", []string{"happy", "excited"}},
		{"agony of mind", []string{"sad"}},
		{"at loggerheads", []string{"angry"}},
		{"bowed down", []string{"sad"}},
	} {
		cs := b.features(tc.query, Query).concepts
		least := 1e9
		for _, c := range tc.concepts {
			least = min(least, cs[conceptIndex(c)])
		}
		if least == 0 {
			t.Errorf("%q joins none of %v", tc.query, tc.concepts)
			continue
		}
		for ci, w := range cs {
			if w > least && !slices.Contains(tc.concepts, vocabulary[ci].Name) {
				t.Errorf("%q: %s weighs %.2f, more than %v (%.2f)", tc.query, vocabulary[ci].Name, w, tc.concepts, least)
			}
		}
	}
}

// A table of another format is refused rather than read as concepts.
func TestParseMobyRefusesOtherTables(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("broll-moby-0\thappy\nchuffed\t3\t0:2\n"))
	_ = zw.Close()
	if _, err := parseMoby(gz.Bytes()); err == nil {
		t.Fatal("a table of another format was read")
	}
	m, err := parseMoby(mobyTable)
	if err != nil {
		t.Fatalf("the embedded table: %v", err)
	}
	if len(m.exact) < 10000 {
		t.Fatalf("the embedded table holds %d phrases", len(m.exact))
	}
}

// BenchmarkLexiconLoadMoby is what the first NewBuiltin of a process pays
// for the Moby table.
func BenchmarkLexiconLoadMoby(b *testing.B) {
	for b.Loop() {
		if _, err := parseMoby(mobyTable); err != nil {
			b.Fatal(err)
		}
	}
}
