package embed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"broll/internal/vocab"
	"broll/internal/words"
)

// builtinModel names the built-in embedder's vectors. Bump the version with
// any change to the vocabulary, the features or their weights: vectors of
// different versions must not be compared, and a new name makes the catalog
// re-embed.
const builtinModel = "builtin-lexical-v6"

const (
	// conceptDims are reserved for vocabulary concepts, one dimension each,
	// so concepts never collide with each other or with hashed words.
	conceptDims = 128
	// Concepts weigh most: a paraphrase in other words that means the same
	// must beat a text sharing a few incidental words.
	conceptWeight = 2.0
	wordWeight    = 1.0
	// trigramWeight is the total weight of one word's character trigrams,
	// spread over them, so spelling variants and inflections still overlap
	// without long words dominating.
	trigramWeight = 0.6
)

// stopWords carry no meaning for finding a clip. The catalog's field labels
// ("Emotion:", "Tags:") are in here too: every document has them.
const stopWords = `a an the and or but nor of at on in into onto to from with without for by as
is are was were be been being am it its this that these those her hers his their theirs them they
him i me my we our us you your yours while who whom whose which what when where why how there here
some any very just so then than too up down out over under about after before during has have had
do does did doing not no can will would should could also own same such only both each all more
most other again further once get gets got shot clip clips video videos footage broll b roll stock
tags emotion location age`

// Builtin is an embedder that needs no model or network. It maps text to a
// vector of vocabulary concepts (synonyms share a dimension), word stems and
// character trigrams, hashed with signs into the remaining dimensions. It
// finds paraphrases built from vocabulary words, not general meaning: Ollama
// gives real semantic search. It is deterministic, so tests can rely on it.
type Builtin struct {
	exact     map[string][]conceptHit // phrase tokens joined by spaces -> concepts
	stemmed   map[string][]conceptHit // the same phrases by word stems; ambiguous stems left out
	maxPhrase int
	stop      map[string]bool
	conflicts []string // stem keys left out because two phrases disagree on them
	graded    []bool   // concepts the thesaurus grades words for
}

// coverage says what matched a token: nothing, the vocabulary (WordNet
// joins it to no concept) or the thesaurus (WordNet joins it to no
// concept the thesaurus grades, such as a mood, but to others: "telly"
// is at home and a tv).
type coverage byte

const (
	uncovered coverage = iota
	byThesaurus
	byVocabulary
)

// conceptHit is a concept a phrase means and how fully: 1 for the
// vocabulary's phrases and a thesaurus's synonyms, less for its related
// words (vocab.RelatedGrade).
type conceptHit struct {
	concept int
	w       float64
	// thesaurus is set for a word of the thesaurus, which leaves WordNet
	// to join it to other concepts too.
	thesaurus bool
}

// NewBuiltin compiles the vocabulary and the thesaurus into lookup tables.
func NewBuiltin() *Builtin {
	if len(vocabulary) > conceptDims {
		panic(fmt.Sprintf("embed: %d vocabulary concepts do not fit in %d reserved dimensions", len(vocabulary), conceptDims))
	}
	b := &Builtin{exact: map[string][]conceptHit{}, stemmed: map[string][]conceptHit{}, stop: map[string]bool{}}
	for _, w := range strings.Fields(stopWords) {
		b.stop[w] = true
	}
	b.addVocabulary()
	b.addThesaurus()
	// The lexicon is read here, once per process, rather than by the
	// first search, which would pay for it.
	loadMeanings()
	loadMoby()
	return b
}

// gradedPhrase is one phrase of the vocabulary or the thesaurus, as
// tokens, and the concept it means.
type gradedPhrase struct {
	toks []string
	hit  conceptHit
}

// addVocabulary adds the vocabulary's phrases, by exact spelling and by
// stems.
func (b *Builtin) addVocabulary() {
	var phrases []gradedPhrase
	for ci, c := range vocabulary {
		phrases = appendPhrases(phrases, c.Phrases, conceptHit{ci, 1, false})
	}
	exactByStem := map[string]string{}
	for _, p := range phrases {
		key := strings.Join(p.toks, " ")
		b.exact[key] = addHit(b.exact[key], p.hit)
		b.maxPhrase = max(b.maxPhrase, len(p.toks))
		exactByStem[strings.Join(stems(p.toks), " ")] = key
	}
	// A stem key stands for an exact phrase only if every phrase with that
	// stem means the same; otherwise ("waves" the sea, "wave" hello) only
	// the exact forms match.
	for _, p := range phrases {
		sk := strings.Join(stems(p.toks), " ")
		if !slices.Equal(b.exact[strings.Join(p.toks, " ")], b.exact[exactByStem[sk]]) {
			if !slices.Contains(b.conflicts, sk) {
				b.conflicts = append(b.conflicts, sk)
			}
			continue
		}
		b.stemmed[sk] = addHit(b.stemmed[sk], p.hit)
	}
	for _, sk := range b.conflicts {
		delete(b.stemmed, sk)
	}
}

// addThesaurus adds the thesaurus's words that the vocabulary does not
// have in any form: the vocabulary says what its own words mean. Forms
// of one word ("sulk", "sulking") mean every concept any of them is
// listed under, by the heaviest grade.
func (b *Builtin) addThesaurus() {
	vocabStems := map[string]bool{}
	for _, c := range vocabulary {
		for _, p := range c.Phrases {
			vocabStems[strings.Join(stems(tokenize(p)), " ")] = true
		}
	}
	var phrases []gradedPhrase
	b.graded = make([]bool, len(vocabulary))
	for _, e := range thesaurus {
		ci := conceptIndex(e.Concept)
		b.graded[ci] = true
		phrases = appendPhrases(phrases, e.Synonyms, conceptHit{ci, 1, true})
		phrases = appendPhrases(phrases, e.Related, conceptHit{ci, vocab.RelatedGrade, true})
	}
	byStem := map[string][]conceptHit{}
	var kept []gradedPhrase
	for _, p := range phrases {
		sk := strings.Join(stems(p.toks), " ")
		if vocabStems[sk] || b.exact[strings.Join(p.toks, " ")] != nil {
			continue
		}
		byStem[sk] = addHit(byStem[sk], p.hit)
		kept = append(kept, p)
	}
	for _, p := range kept {
		sk := strings.Join(stems(p.toks), " ")
		b.exact[strings.Join(p.toks, " ")] = byStem[sk]
		b.stemmed[sk] = byStem[sk]
		b.maxPhrase = max(b.maxPhrase, len(p.toks))
	}
}

// appendPhrases appends the phrases ps, each meaning h.
func appendPhrases(out []gradedPhrase, ps []string, h conceptHit) []gradedPhrase {
	for _, p := range ps {
		if toks := tokenize(p); len(toks) > 0 {
			out = append(out, gradedPhrase{toks, h})
		}
	}
	return out
}

// addHit adds h to hits, a concept already there keeping its heavier
// weight.
func addHit(hits []conceptHit, h conceptHit) []conceptHit {
	for i := range hits {
		if hits[i].concept == h.concept {
			hits[i].w = max(hits[i].w, h.w)
			return hits
		}
	}
	return append(hits, h)
}

// Model names the vectors this embedder makes.
func (b *Builtin) Model() string { return builtinModel }

// Embed makes the same kind of features of a query and of a document; only
// how a word outside the vocabulary joins a concept differs by kind (see
// addMeanings).
func (b *Builtin) Embed(ctx context.Context, kind Kind, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("builtin embed: %w", err)
		}
		out[i] = b.vector(t, kind)
	}
	return out, nil
}

func (b *Builtin) vector(text string, kind Kind) []float32 {
	return b.features(text, kind).project()
}

// textFeatures are what a text is made of before it becomes a vector: a
// weight per vocabulary concept, and hashed features (words, trigrams,
// WordNet meanings) in the order they were found, so that projecting them
// adds in a fixed order and gives the same floats every time.
type textFeatures struct {
	concepts []float64
	hashed   []hashedFeature
}

type hashedFeature struct {
	h uint64
	w float64
}

func (f *textFeatures) add(kind byte, s string, w float64) {
	f.hashed = append(f.hashed, hashedFeature{fnv1a(kind, s), w})
}

func (b *Builtin) features(text string, kind Kind) *textFeatures {
	f := &textFeatures{concepts: make([]float64, conceptDims)}
	toks := tokenize(text)
	sts := stems(toks)
	covered := make([]coverage, len(toks))
	for i := 0; i < len(toks); {
		n, concepts := b.match(toks, sts, i)
		for _, h := range concepts {
			f.concepts[h.concept] += conceptWeight * h.w
		}
		for j := i; j < i+n && len(concepts) > 0; j++ {
			covered[j] = byVocabulary
			if concepts[0].thesaurus {
				covered[j] = byThesaurus
			}
		}
		for j := i; j < i+n; j++ {
			if len(toks[j]) < 2 || b.stop[toks[j]] {
				continue
			}
			f.add('w', sts[j], wordWeight)
			grams := trigrams(toks[j])
			w := trigramWeight / math.Sqrt(float64(len(grams)))
			for _, g := range grams {
				f.add('g', g, w)
			}
		}
		i += n
	}
	linked := b.addMeanings(f, toks, covered, kind)
	b.addMoby(f, toks, sts, covered, linked, kind)
	return f
}

// project folds the features into Dimensions: concepts one dimension each,
// hashed features into the rest with a sign from the hash, so that
// collisions cancel out on average. The result has unit length.
func (f *textFeatures) project() []float32 {
	acc := make([]float64, Dimensions)
	copy(acc, f.concepts)
	for _, x := range f.hashed {
		idx := conceptDims + int(x.h%uint64(Dimensions-conceptDims))
		if x.h>>63 == 1 {
			acc[idx] -= x.w
		} else {
			acc[idx] += x.w
		}
	}
	var sum float64
	for _, x := range acc {
		sum += x * x
	}
	if sum == 0 {
		// Text of stop words only: give it a fixed direction rather than a
		// zero vector, which cosine distance cannot handle.
		acc[conceptDims+int(fnv1a('e', "")%uint64(Dimensions-conceptDims))] = 1
	}
	out := make([]float32, Dimensions)
	for i, x := range acc {
		out[i] = float32(x)
	}
	normalize(out)
	return out
}

// match finds the longest vocabulary phrase starting at token i, exact
// spelling first, then by stems. It returns how many tokens it covers
// (at least 1) and the concepts found (none if nothing matched).
func (b *Builtin) match(toks, sts []string, i int) (int, []conceptHit) {
	for n := min(b.maxPhrase, len(toks)-i); n >= 1; n-- {
		if cs, ok := b.exact[strings.Join(toks[i:i+n], " ")]; ok {
			return n, cs
		}
		if cs, ok := b.stemmed[strings.Join(sts[i:i+n], " ")]; ok {
			return n, cs
		}
	}
	return 1, nil
}

// fnv1a is 64-bit FNV-1a over a kind byte and s, without allocating.
func fnv1a(kind byte, s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	h ^= uint64(kind)
	h *= prime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// tokenize is the embedder's (and its table generator's) words.Tokenize.
func tokenize(text string) []string { return words.Tokenize(text) }

func stems(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = stem(t)
	}
	return out
}

// stem strips common English inflections so that laughs, laughed and
// laughing meet. It is deliberately crude: it only has to map forms of one
// word together, not produce real words.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		w = w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:n-2])
	case n > 3 && strings.HasSuffix(w, "s") &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from running) into "run"; l, s and z stay doubled
// because the base word has them (scroll, pass, buzz).
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// trigrams returns the character trigrams of a word with boundary marks.
func trigrams(w string) []string {
	r := []rune("<" + w + ">")
	if len(r) < 3 {
		return []string{string(r)}
	}
	out := make([]string, 0, len(r)-2)
	for i := 0; i+3 <= len(r); i++ {
		out = append(out, string(r[i:i+3]))
	}
	return out
}
