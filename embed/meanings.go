package embed

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

const (
	// meaningWeight is the total weight of one word's WordNet meanings,
	// hashed like words: two words that share meanings ("spaghetti" and
	// "pasta") overlap there even when no concept joins them.
	meaningWeight = 0.5
	// A word outside the vocabulary joins a concept when the meanings they
	// share score at least linkThreshold together (see linkScore),
	// weighing linkWeight times that score of a vocabulary phrase's
	// weight, at most the whole of it. A word of a document needs
	// docLinkThreshold: a clip's description says what it shows in many
	// words, and its incidental ones ("glow", "warm", "framing") must not
	// bring in concepts it is not about.
	linkThreshold    = 0.3
	docLinkThreshold = 0.5
	linkWeight       = 1.0
	// A word of a query with at most queryLinkSenses senses weighs in
	// every concept it joins what that concept scores relative to its
	// best one, at least: the few words of a query each say what is
	// wanted, and a word with one meaning that meets "sad" ("glum")
	// means sad however long WordNet's path between them. A word with
	// more senses gets that in proportion, since its link may come from
	// one of them ("applying" cream at the gym).
	queryLinkSenses = 2
)

// meanings joins the WordNet lexicon to the vocabulary: for every meaning
// (feature) the concepts whose phrases carry it (see conceptLinks).
type meanings struct {
	lex   *lexicon
	links map[uint32][]conceptLink
}

type conceptLink struct {
	concept int
	w       float32
}

// loadMeanings builds the tables once per process.
var loadMeanings = sync.OnceValue(func() *meanings {
	lx := loadLexicon()
	return &meanings{lex: lx, links: conceptLinks(lx)}
})

// conceptLinks lists for every meaning the concepts whose phrases carry
// it, with the weight of the phrase that carries it most, times its
// rarity.
func conceptLinks(lx *lexicon) map[uint32][]conceptLink {
	links := map[uint32][]conceptLink{}
	for ci, c := range vocabulary {
		weights := map[uint32]float32{}
		for _, p := range c.Phrases {
			toks := tokenize(p)
			if len(toks) == 0 || len(toks) > lx.maxTokens {
				continue
			}
			for _, f := range lx.features(toks) {
				weights[f.id] = max(weights[f.id], f.w)
			}
		}
		ids := make([]uint32, 0, len(weights))
		for id := range weights {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			links[id] = append(links[id], conceptLink{ci, weights[id] * lx.idf[id]})
		}
	}
	return links
}

// A sense of a phrase that meets a vocabulary concept (the linkScore of
// its meanings) at least senseMeet weighs at least senseMax of the
// phrase's commonest sense, one that meets it less in proportion; a
// sense more common than that keeps its own weight.
const (
	senseMeet = 0.6
	senseMax  = 0.35
)

// preferDomain weighs the senses of every phrase outside the vocabulary
// by the concepts they meet as well as by how common they are: in a
// search for clips a rare sense that meets the vocabulary ("indifferent"
// as neutral, not as uninterested) counts more than a general corpus
// says. The vocabulary's own phrases keep their weights: every sense of
// theirs meets their concept.
func (lx *lexicon) preferDomain() {
	links := make([][]conceptLink, len(lx.idf))
	for id, ls := range conceptLinks(lx) {
		links[id] = ls
	}
	own := map[string]bool{}
	for _, c := range vocabulary {
		for _, p := range c.Phrases {
			own[strings.Join(tokenize(p), " ")] = true
		}
	}
	score := make([]float32, len(vocabulary))
	weight := func(s lexSense) float32 {
		clear(score)
		var best float32
		for _, f := range s.feats {
			for _, l := range links[f.id] {
				score[l.concept] += linkScore(f, l)
				best = max(best, score[l.concept])
			}
		}
		return max(s.w, senseMax*min(1, best/senseMeet))
	}
	for p, e := range lx.phrases {
		if own[p] {
			continue
		}
		for pi, senses := range e.senses {
			// Most phrases meet nothing: their senses keep the weights
			// they were read with.
			if slices.ContainsFunc(senses, func(s lexSense) bool { return weight(s) != s.w }) {
				e.mergeSenses(pi, weight)
			}
		}
	}
}

// addMeanings adds the WordNet meanings of the words of toks, longest
// phrase first, and joins the words that no vocabulary phrase covered to
// the concepts close enough in meaning: "telly" to tv, "bloke" to man,
// "glum" to sad (how closely depends on kind: see linkThreshold and
// queryLinkSenses).
//
// It returns, for each token, the concept weights its phrase's links
// added (nil for most), which the Moby thesaurus tops up rather than adds
// to (see addMoby).
func (b *Builtin) addMeanings(tf *textFeatures, toks []string, covered []coverage, kind Kind) []map[int]float64 {
	m := loadMeanings()
	link := make(map[int]float32, 4)
	var linked []map[int]float64
	for i := 0; i < len(toks); {
		n, feats := m.match(toks, i, b.stop)
		if n == 0 {
			i++
			continue
		}
		var norm float64
		for _, f := range feats {
			w := float64(f.w * m.lex.idf[f.id])
			norm += w * w
		}
		norm = math.Sqrt(norm)
		clear(link)
		for _, f := range feats {
			tf.hashed = append(tf.hashed, hashedFeature{meaningHash(f.id), meaningWeight * float64(f.w*m.lex.idf[f.id]) / norm})
			for _, l := range m.links[f.id] {
				link[l.concept] += linkScore(f, l)
			}
		}
		var added map[int]float64
		switch slices.Max(covered[i : i+n]) {
		case uncovered:
			added = m.addLinks(tf, link, toks[i:i+n], kind)
		case byThesaurus:
			maps.DeleteFunc(link, func(ci int, _ float32) bool { return b.graded[ci] })
			added = m.addLinks(tf, link, toks[i:i+n], kind)
		}
		if added != nil {
			if linked == nil {
				linked = make([]map[int]float64, len(toks))
			}
			for j := i; j < i+n; j++ {
				linked[j] = added
			}
		}
		i += n
	}
	return linked
}

// addLinks adds the concepts a phrase outside the vocabulary joins, each
// scoring link[concept] (see addMeanings), and returns the weights it
// added (nil when none).
func (m *meanings) addLinks(tf *textFeatures, link map[int]float32, phrase []string, kind Kind) map[int]float64 {
	threshold := float32(linkThreshold)
	var best float32
	for _, s := range link {
		best = max(best, s)
	}
	var sure float64 // how much a query's word counts its best concept
	if kind == Document {
		threshold = docLinkThreshold
	} else if best >= threshold {
		sure = min(1, queryLinkSenses/float64(max(1, m.lex.senseCount(phrase))))
	}
	var added map[int]float64
	for ci, s := range link {
		if s >= threshold {
			w := max(min(1, linkWeight*float64(s)), sure*float64(s/best))
			tf.concepts[ci] += conceptWeight * w
			if added == nil {
				added = make(map[int]float64, 2)
			}
			added[ci] = conceptWeight * w
		}
	}
	return added
}

// linkScore says how close a word is to a concept through one meaning they
// share: the word's weight for it times the concept's (which holds its
// rarity). The scores of every shared meaning add up: the same synset (a
// synonym) scores most, a hypernym ("croon" is a way to "sing") as much as
// the relation weighs, a generic one ("person") hardly anything, and a
// word that meets a concept through several weak meanings ("grumpy" is
// "annoyed and irritable") joins it where a single one would not.
func linkScore(f lexFeature, l conceptLink) float32 { return f.w * l.w }

// match finds the longest lexicon phrase starting at token i and returns
// how many tokens it covers and its meanings (0 and nil when none does).
// Single stop words are not looked up: "a" is grammar, not the vitamin.
func (m *meanings) match(toks []string, i int, stop map[string]bool) (int, []lexFeature) {
	for n := min(m.lex.maxTokens, len(toks)-i); n >= 1; n-- {
		if n == 1 && (len(toks[i]) < 2 || stop[toks[i]]) {
			return 0, nil
		}
		if feats := m.lex.features(toks[i : i+n]); len(feats) > 0 {
			return n, feats
		}
	}
	return 0, nil
}

// meaningHash is FNV-1a of a meaning's number, kept apart from words and
// trigrams by its kind byte.
func meaningHash(id uint32) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	h ^= 's'
	h *= prime
	for range 4 {
		h = (h ^ uint64(id&0xff)) * prime
		id >>= 8
	}
	return h
}

// senseCount is how many senses a phrase has in every part of speech, as
// written or, failing that, in its base forms.
func (lx *lexicon) senseCount(toks []string) int {
	n := 0
	if e := lx.phrases[strings.Join(toks, " ")]; e != nil {
		for _, ss := range e.senses {
			n += len(ss)
		}
		return n
	}
	last := len(toks) - 1
	for pi, pos := range "nvar" {
		if b := lx.base(toks, last, byte(pos)); b != nil {
			n += len(b.senses[pi])
		}
	}
	return n
}
