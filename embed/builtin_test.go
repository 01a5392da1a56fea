package embed

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot // both are unit vectors
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func embedOne(t *testing.T, e Embedder, kind Kind, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), kind, []string{text})
	if err != nil {
		t.Fatalf("embed %q: %v", text, err)
	}
	return vs[0]
}

func TestBuiltinShape(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	if b.Model() != "builtin-lexical-v6" {
		t.Fatalf("model = %q", b.Model())
	}
	texts := []string{
		"Young woman laughing at her phone on the couch",
		"",
		"the and of",
		"Ünïcödé café — naïve résumé 🎉",
		strings.Repeat("coffee ", 500),
	}
	vs, err := b.Embed(context.Background(), Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != Dimensions {
			t.Errorf("text %d: %d dims, want %d", i, len(v), Dimensions)
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: norm %f, want 1", i, n)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("text %d: non-finite component", i)
			}
		}
	}
}

func TestBuiltinDeterministic(t *testing.T) {
	t.Parallel()
	text := "Man driving a car, cheerful, thumbs up to the camera"
	a := embedOne(t, NewBuiltin(), Document, text)
	b := embedOne(t, NewBuiltin(), Document, text)
	if !slices.Equal(a, b) {
		t.Fatal("two builtin embedders gave different vectors for the same text")
	}
	// Kind does not matter to the builtin features of vocabulary words
	// (only words outside it join concepts differently: addMeanings,
	// addMoby).
	const known = "Man driving a car, cheerful, thumbs up"
	if d, q := embedOne(t, NewBuiltin(), Document, known), embedOne(t, NewBuiltin(), Query, known); !slices.Equal(d, q) {
		t.Fatal("query and document vectors differ")
	}
}

func TestBuiltinCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBuiltin().Embed(ctx, Query, []string{"x"}); err == nil {
		t.Fatal("want an error on a canceled context")
	}
}

func TestBuiltinVocabularyHasNoConflicts(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	if len(b.conflicts) > 0 {
		t.Errorf("phrases with the same stems map to different concepts (only exact spelling matches): %q", b.conflicts)
	}
	seen := map[string]bool{}
	for _, c := range vocabulary {
		if seen[c.Name] {
			t.Errorf("concept %q listed twice", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestBuiltinSynonymsShareConcepts(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	groups := [][]string{
		{"joyful", "cheerful", "smiling", "glad", "happy"},
		{"cracking up", "giggling", "chuckling", "lol", "laughing"},
		{"stunned", "astonished", "jaw drop", "shocked"},
		{"upset", "crying", "tearful", "sad"},
		{"furious", "mad", "annoyed", "angry"},
		{"thrilled", "hyped", "pumped", "excited"},
		{"puzzled", "lost", "confused"},
		{"driving", "behind the wheel", "vehicle", "car"},
		{"lady", "girl", "female", "woman"},
		{"guy", "dude", "male", "man"},
		{"smartphone", "scrolling", "texting", "phone"},
		{"sofa", "couch"},
		{"talking to camera", "vlog", "selfie"},
		{"workout", "working out", "gym"},
	}
	for _, g := range groups {
		want := b.concepts(g[len(g)-1])
		if len(want) == 0 {
			t.Errorf("%q maps to no concept", g[len(g)-1])
			continue
		}
		for _, w := range g[:len(g)-1] {
			if got := b.concepts(w); !sharesAny(got, want) {
				t.Errorf("%q -> %v, want a concept of %q (%v)", w, got, g[len(g)-1], want)
			}
		}
	}
	// Phrases win over their words: "working out" is the gym, not the office.
	if got := b.concepts("working out"); slices.Contains(got, "office") {
		t.Errorf("working out -> %v", got)
	}
}

// concepts lists the concept names a text maps to.
func (b *Builtin) concepts(text string) []string {
	toks := tokenize(text)
	sts := stems(toks)
	var out []string
	for i := 0; i < len(toks); {
		n, cs := b.match(toks, sts, i)
		for _, h := range cs {
			out = append(out, vocabulary[h.concept].Name)
		}
		i += n
	}
	return out
}

func sharesAny(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// clipTexts are clip descriptions in the shape search ranks them.
var clipTexts = []string{
	"Young woman laughing at her phone on the couch",
	"Man driving a car and singing along to music",
	"Woman cooking pasta in a bright kitchen",
	"Guy working on a laptop at his office desk, focused",
	"Woman unboxing a package at home, excited",
	"Man doing a workout at the gym, lifting weights",
	"Couple walking on the beach at sunset",
	"Woman talking to the camera, holding a coffee cup",
	"Angry man shouting at his laptop",
	"Sad girl crying on her bed",
	"Confused man scratching his head in the street",
	"Shocked woman covering her mouth, jaw drop reaction",
	"Man laughing with friends in a restaurant",
	"Woman scrolling her phone in the office",
}

func TestBuiltinRanksParaphraseFirst(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	docs, err := b.Embed(context.Background(), Document, clipTexts)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		want  int // index into clipTexts
	}{
		{"lady cracking up while scrolling on the sofa", 0},
		{"dude behind the wheel listening to a song", 1},
		{"girl baking in her kitchen", 2},
		{"male at work typing on his computer", 3},
		{"female opening a parcel in the living room, thrilled", 4},
		{"guy exercising, fitness training", 5},
		{"lady vlogging with a latte", 7},
		{"furious dude yelling at the computer", 8},
		{"tearful young woman in the bedroom", 9},
		{"puzzled guy downtown", 10},
		{"astonished lady, stunned", 11},
	}
	for _, c := range cases {
		q := embedOne(t, b, Query, c.query)
		best, bestSim := -1, -2.0
		for i, d := range docs {
			if s := cosine(q, d); s > bestSim {
				best, bestSim = i, s
			}
		}
		if best != c.want {
			t.Errorf("%q: best match %q (%.3f), want %q (%.3f)",
				c.query, clipTexts[best], bestSim, clipTexts[c.want], cosine(q, docs[c.want]))
		}
	}
}

func TestBuiltinCatalogDocumentText(t *testing.T) {
	t.Parallel()
	// The catalog embeds labelled text ("Emotion: laughing. Person: female");
	// the labels must not drown the title.
	b := NewBuiltin()
	docs, err := b.Embed(context.Background(), Document, []string{
		"Young woman laughing at her phone on the couch. Tags: phone, couch. Emotion: laughing. Person: female, age 18-24. Location: home. vertical video",
		"Man driving a car. Tags: car, driving. Emotion: happy. Person: male, age 25-34. Location: car. horizontal video",
		"Woman at the gym. Tags: fitness. Emotion: confident. Person: female, age 25-34. Location: gym. vertical video",
	})
	if err != nil {
		t.Fatal(err)
	}
	q := embedOne(t, b, Query, "lady cracking up while scrolling on the sofa")
	if s0, s1, s2 := cosine(q, docs[0]), cosine(q, docs[1]), cosine(q, docs[2]); s0 <= s1 || s0 <= s2 {
		t.Fatalf("similarities %.3f %.3f %.3f: want the first highest", s0, s1, s2)
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	same := [][]string{
		{"laugh", "laughs", "laughed", "laughing"},
		{"smile", "smiles", "smiling", "smiled"},
		{"dance", "dances", "dancing", "danced"},
		{"run", "running"},
		{"scroll", "scrolling", "scrolls"},
		{"lady", "ladies"},
	}
	for _, g := range same {
		for _, w := range g[1:] {
			if stem(w) != stem(g[0]) {
				t.Errorf("stem(%q) = %q, stem(%q) = %q", w, stem(w), g[0], stem(g[0]))
			}
		}
	}
}

func BenchmarkBuiltin(b *testing.B) {
	e := NewBuiltin()
	texts := slices.Repeat(clipTexts, 3)[:32]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), Document, texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinQuery embeds one search query at a time, as a search
// does: it must stay well under a millisecond, WordNet lookups included.
func BenchmarkBuiltinQuery(b *testing.B) {
	e := NewBuiltin()
	queries := []string{"someone astonished", "grinning guy", "furious bloke on the settee",
		"retiree at the shore", "lady brewing an espresso"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.Embed(context.Background(), Query, queries[i%len(queries):i%len(queries)+1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
