package embed

import (
	"slices"
	"testing"
)

// TestLexiconLinks checks the embedded WordNet table through what it is for:
// words outside the vocabulary that join a concept.
func TestLexiconLinks(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	index := map[string]int{}
	for i, c := range vocabulary {
		index[c.Name] = i
	}
	for word, concept := range map[string]string{"bloke": "man", "telly": "tv", "glum": "sad", "astonished": "shocked"} {
		ci, ok := index[concept]
		if !ok {
			t.Fatalf("no concept %q", concept)
		}
		f := b.features(word, Query)
		if f.concepts[ci] == 0 {
			t.Errorf("%q does not join %s", word, concept)
		}
	}
	// A query's word with one sense joins its concept fully however weak
	// the link; a document's word needs a close one.
	sad := index["sad"]
	if q, d := b.features("saddened", Query), b.features("saddened", Document); q.concepts[sad] != conceptWeight || d.concepts[sad] != 0 {
		t.Errorf("saddened joins sad at %.2f in a query, %.2f in a document; want %.0f and 0", q.concepts[sad], d.concepts[sad], conceptWeight)
	}
	if f := loadLexicon().features([]string{"grinning"}); len(f) == 0 {
		t.Error("grinning: no meanings (the inflection rules do not reach grin)")
	}
	if _, err := parseLexicon(wordnetLexicon[:len(wordnetLexicon)/2]); err == nil {
		t.Error("a truncated lexicon parses")
	}
	if !slices.Equal(embedOne(t, b, Query, "furious bloke"), embedOne(t, NewBuiltin(), Query, "furious bloke")) {
		t.Error("two embedders give different vectors")
	}
}

// BenchmarkLexiconLoad is what the first NewBuiltin of a process pays:
// parsing the table and weighing its senses by the vocabulary.
func BenchmarkLexiconLoad(b *testing.B) {
	for b.Loop() {
		lx, err := parseLexicon(wordnetLexicon)
		if err != nil {
			b.Fatal(err)
		}
		lx.preferDomain()
	}
}
