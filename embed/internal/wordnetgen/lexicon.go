package main

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"

	"broll/internal/words"
)

// relationWeights says how much of a synset's meaning a related synset
// carries. Hypernyms make "spaghetti" meet "pasta" and "bistro" meet
// "cafe"; similar-to joins an adjective satellite to its head
// ("astonished" to "surprised"); derivation joins "runner" to "run".
var relationWeights = map[string]float64{
	"&":  0.7, // similar to (from a satellite to its head only)
	"+":  0.5, // derivationally related form
	`\`:  0.5, // pertainym
	"$":  0.5, // verb group
	"=":  0.4, // attribute
	"*":  0.3, // entailment
	">":  0.3, // cause
	"^":  0.3, // also see
	"#p": 0.3, // part holonym: a bumper is part of a car
	"#m": 0.3, // member holonym
}

const (
	// A synset's hypernyms (instance hypernyms included) weigh
	// hypernymWeight, theirs that times hypernymDecay, and so on up to
	// hypernymDepth levels: far enough up, everything is an entity.
	hypernymWeight = 0.6
	hypernymDecay  = 0.6
	hypernymDepth  = 3
	// glossWeight is the weight of the words of a synset's definition (each
	// by its commonest sense): "grumpy" is "annoyed and irritable", which
	// its relations do not say.
	glossWeight = 0.3
	// modifierGlossWeight is glossWeight for adjectives and adverbs, which
	// have no hypernyms: their definitions say most of what they mean.
	modifierGlossWeight = 0.5
	// secondHop weighs the relations of a related synset, times both
	// relations' weights: "glum" is similar to "ill-natured", which
	// "also see"s "unhappy".
	secondHop = 0.6
	// maxSenses of one lemma and part of speech are kept, the commonest,
	// rare ones included: the embedder weighs them by how common they are
	// and by how closely they meet its vocabulary.
	maxSenses = 8
	// maxFeatures per sense are kept, the heaviest: more add more noise
	// (in the embedder's hashed dimensions) than meaning, and size.
	maxFeatures = 6
	// maxTokens: longer collocations are rare in searches.
	maxTokens = 3
	// weightLevels quantizes weights so the table stays small.
	weightLevels = 15
)

// stopWords get no entry and are skipped in definitions: WordNet has "a"
// (the vitamin) and "it" (information technology), which in a search are
// only grammar.
var stopWords = map[string]bool{}

// vagueWords are skipped in definitions: they say what kind of definition
// it is, not what the thing is.
var vagueWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but nor of at on in into onto to from with without for by as
is are was were be been being am it its this that these those her hers his their theirs them they
him i me my we our us you your yours while who whom whose which what when where why how there here
some any very just so then than too up down out over under about after before has have had
do does did doing not no can will would should could also own same such only both each all more
most other again further once get gets got`) {
		stopWords[w] = true
	}
	for _, w := range strings.Fields(`someone somebody something person people one thing act make
made use used using usually especially often etc e g i e cause causes kind form state quality
having become characterized relating pertaining having`) {
		vagueWords[w] = true
	}
}

// entry is one phrase of the lexicon in one part of speech, with its
// senses. share is the weight of the part of speech among the phrase's
// senses (1 for its commonest).
type entry struct {
	phrase string
	pos    byte
	share  float64
	senses []senseFeatures
}

// senseFeatures is one sense of an entry: its weight among the phrase's
// senses (1 for the commonest) and its features, synsets weighted 0..1
// (before quantizing). The embedder chooses among the senses by the
// vocabulary they meet, so the rare ones are kept too.
type senseFeatures struct {
	synset   synsetID
	weight   float64
	features map[synsetID]float64
}

// addSense adds a sense to the entry once (two lemmas may make the same
// phrase: "drivers_seat" and "driver's_seat"), by its heavier weight,
// keeping the senses in an order that does not depend on the order the
// lemmas come in: heaviest first, then by synset.
func (e *entry) addSense(s senseFeatures) {
	if i := slices.IndexFunc(e.senses, func(x senseFeatures) bool { return x.synset == s.synset }); i >= 0 {
		e.senses[i].weight = max(e.senses[i].weight, s.weight)
	} else {
		e.senses = append(e.senses, s)
	}
	slices.SortFunc(e.senses, func(a, b senseFeatures) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), cmp.Compare(a.synset.pos, b.synset.pos), cmp.Compare(a.synset.offset, b.synset.offset))
	})
}

// union is every feature of the entry, by its heaviest weight in any sense.
func (e *entry) union() map[synsetID]float64 {
	out := map[synsetID]float64{}
	for _, s := range e.senses {
		for f, w := range s.features {
			out[f] = max(out[f], w)
		}
	}
	return out
}

// buildLexicon gives every lemma of wn, per part of speech, its senses,
// each a weighted set of synsets: the sense's own and its neighbours. The
// heaviest of each sense are kept, judged with their specificity (inverse
// document frequency), so that "person" or "act" does not make every pair
// of words meet; those that only one entry has are dropped: they cannot
// make two words meet.
func buildLexicon(wn *wordnet) []entry {
	expanded := map[synsetID]map[synsetID]float64{}
	byKey := map[string]*entry{}
	for lemma, senses := range wn.senses {
		p := phrase(lemma)
		if p == "" || stopWords[p] || len(strings.Fields(p)) > maxTokens || rare(wn, p, senses) {
			continue
		}
		for _, k := range keptSenses(wn, lemma, senses) {
			key := p + "/" + string(k.id.pos)
			e := byKey[key]
			if e == nil {
				e = &entry{phrase: p, pos: k.id.pos}
				byKey[key] = e
			}
			e.share = max(e.share, k.weight)
			exp, ok := expanded[k.id]
			if !ok {
				exp = expand(wn, k.id)
				expanded[k.id] = exp
			}
			e.addSense(senseFeatures{synset: k.id, weight: k.weight, features: exp})
		}
	}

	df := map[synsetID]int{}
	for _, e := range byKey {
		for f := range e.union() {
			df[f]++
		}
	}
	n := float64(len(byKey))
	domain := domainFeatures(byKey)
	out := make([]entry, 0, len(byKey))
	for _, e := range byKey {
		kept := entry{phrase: e.phrase, pos: e.pos, share: e.share}
		for _, s := range e.senses {
			if ks := keptFeatures(s.features, df, n, domain); len(ks) > 0 {
				kept.senses = append(kept.senses, senseFeatures{synset: s.synset, weight: s.weight, features: ks})
			}
		}
		if len(kept.senses) > 0 {
			out = append(out, kept)
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.phrase, b.phrase), cmp.Compare(a.pos, b.pos))
	})
	return out
}

// keptFeatures keeps the maxFeatures most specific features of a sense
// that another entry has too, their weights quantized.
func keptFeatures(features map[synsetID]float64, df map[synsetID]int, n float64, domain map[synsetID]bool) map[synsetID]float64 {
	type fw struct {
		f            synsetID
		w, specified float64
	}
	var list []fw
	for f, w := range features {
		if df[f] < 2 {
			continue
		}
		spec := w * math.Log(n/float64(df[f])) / math.Log(n)
		if domain[f] {
			spec *= 1 + domainBonus
		}
		list = append(list, fw{f, w, spec})
	}
	slices.SortFunc(list, func(a, b fw) int {
		return cmp.Or(cmp.Compare(b.specified, a.specified), cmp.Compare(a.f.pos, b.f.pos), cmp.Compare(a.f.offset, b.f.offset))
	})
	out := map[synsetID]float64{}
	for _, x := range list[:min(len(list), maxFeatures)] {
		if q := math.Round(x.w * weightLevels); q > 0 {
			out[x.f] = q / weightLevels
		}
	}
	return out
}

// rare says whether a lemma is left out to keep the lexicon small: never
// seen in the tagged corpus, and either a collocation (searches say
// "shopping cart" as two words, which the lexicon has) or only the name
// of an animal or plant species.
func rare(wn *wordnet, p string, senses []sense) bool {
	tagged, species := false, true
	for _, s := range senses {
		tagged = tagged || s.count > 0
		if ss := wn.synsets[s.synset]; ss != nil && ss.lexFile != lexAnimal && ss.lexFile != lexPlant {
			species = false
		}
	}
	return !tagged && (strings.Contains(p, " ") || species)
}

// Lexicographer files (lexnames(5WN)).
const (
	lexAnimal = 5
	lexPlant  = 20
)

type keptSense struct {
	id     synsetID
	weight float64
}

// keptSenses weighs a lemma's senses by their tag counts (plus a prior
// falling with the sense's rank, for the many never tagged) and keeps up
// to maxSenses per part of speech, in rank order, weighted relative to the
// commonest. Proper-noun senses ("Guy" Fawkes for guy) are left out.
func keptSenses(wn *wordnet, lemma string, senses []sense) []keptSense {
	var all []keptSense
	for _, s := range senses {
		ss := wn.synsets[s.synset]
		if ss == nil || properIn(ss, lemma) {
			continue
		}
		all = append(all, keptSense{s.synset, float64(s.count) + 1/float64(s.rank)})
	}
	if len(all) == 0 {
		return nil
	}
	top := slices.MaxFunc(all, func(a, b keptSense) int { return cmp.Compare(a.weight, b.weight) }).weight
	var out []keptSense
	perPOS := map[byte]int{}
	for _, k := range all { // in rank order within each part of speech
		if perPOS[k.id.pos] >= maxSenses {
			continue
		}
		perPOS[k.id.pos]++
		out = append(out, keptSense{k.id, k.weight / top})
	}
	return out
}

// addHypernyms adds id at weight w and its own hypernyms, each level
// weighing hypernymDecay less, depth levels in all.
func addHypernyms(wn *wordnet, id synsetID, w float64, depth int, add func(synsetID, float64)) {
	add(id, w)
	if h := wn.synsets[id]; h != nil && depth > 1 {
		for _, hp := range h.pointers {
			if hp.symbol == "@" || hp.symbol == "@i" {
				addHypernyms(wn, hp.target, w*hypernymDecay, depth-1, add)
			}
		}
	}
}

// topSense is the commonest sense of a word of a definition, or false.
func topSense(wn *wordnet, word string) (synsetID, bool) {
	if s, ok := wn.topSenses[word]; ok {
		return s, s != synsetID{}
	}
	var top synsetID
	for _, lemma := range lemmasOf(wn, word) {
		if ks := keptSenses(wn, lemma, wn.senses[lemma]); len(ks) > 0 {
			top = slices.MaxFunc(ks, func(a, b keptSense) int { return cmp.Compare(a.weight, b.weight) }).id
			break
		}
	}
	wn.topSenses[word] = top
	return top, top != synsetID{}
}

// lemmasOf finds the lemmas a word of running text may be a form of:
// itself, then WordNet's irregular forms, then its suffix rules.
func lemmasOf(wn *wordnet, word string) []string {
	var out []string
	if _, ok := wn.senses[word]; ok {
		out = append(out, word)
	}
	for _, pf := range posFiles {
		out = append(out, wn.exceptions[word+"/"+string(pf.pos)]...)
	}
	for _, r := range words.MorphRules {
		if len(word) > len(r.Suffix)+1 && strings.HasSuffix(word, r.Suffix) {
			b := word[:len(word)-len(r.Suffix)] + r.Ending
			if _, ok := wn.senses[b]; ok {
				out = append(out, b)
			}
		}
	}
	return out
}

// properIn says whether the synset writes lemma with a capital letter.
func properIn(ss *synset, lemma string) bool {
	for _, w := range ss.words {
		if strings.EqualFold(w, lemma) {
			return strings.IndexFunc(w, unicode.IsUpper) >= 0
		}
	}
	return false
}

// related adds the synsets related to id (not its hypernyms), each at w
// times the relation's weight.
func related(wn *wordnet, id synsetID, w float64, add func(synsetID, float64)) {
	ss := wn.synsets[id]
	if ss == nil || w <= 0 {
		return
	}
	for _, p := range ss.pointers {
		if rw, ok := relationWeights[p.symbol]; ok && (p.symbol != "&" || ss.satellite) {
			add(p.target, w*rw)
		}
	}
}

// expand returns a synset with its neighbours, weighted by relationWeights,
// and the words of its definition.
func expand(wn *wordnet, id synsetID) map[synsetID]float64 {
	out := map[synsetID]float64{id: 1}
	add := func(f synsetID, w float64) { out[f] = max(out[f], w) }
	ss := wn.synsets[id]
	for _, p := range ss.pointers {
		if p.symbol == "@" || p.symbol == "@i" {
			addHypernyms(wn, p.target, hypernymWeight, hypernymDepth, add)
			continue
		}
		w, ok := relationWeights[p.symbol]
		if !ok || (p.symbol == "&" && !ss.satellite) {
			continue
		}
		add(p.target, w)
		related(wn, p.target, w*secondHop, add)
	}
	for _, a := range antonyms(wn, id) {
		delete(out, a)
	}
	addGloss(wn, id, ss, add)
	return out
}

// addGloss adds the commonest sense of each word of the synset's
// definition. The genus of a noun's definition, the head of its first
// noun phrase, names a kind the noun is, as a hypernym does: a bride is "a
// woman who has recently been married", a husband "a married man", which
// WordNet's hypernyms (newlywed, spouse) do not say.
func addGloss(wn *wordnet, id synsetID, ss *synset, add func(synsetID, float64)) {
	genus := -1
	if id.pos == 'n' {
		first, _, _ := strings.Cut(ss.gloss, ";")
		genus = genusOf(strings.Fields(phrase(first)))
	}
	for i, w := range strings.Fields(phrase(ss.gloss)) {
		if stopWords[w] || vagueWords[w] || len(w) < 3 {
			continue
		}
		s, ok := topSense(wn, w)
		if !ok || s == id {
			continue
		}
		switch {
		case id.pos == 'a' || id.pos == 'r':
			add(s, modifierGlossWeight)
		case i == genus:
			add(s, hypernymWeight)
		default:
			add(s, glossWeight)
		}
	}
}

// genusOf returns the index of the head of a definition's first noun
// phrase, the last word before a word that ends the phrase ("a married
// man", "a woman who ..."), or -1 when it is vague ("a person who ...").
func genusOf(toks []string) int {
	i := 0
	for i < len(toks) && determiners[toks[i]] {
		i++
	}
	start := i
	for i < len(toks) && !phraseEnds[toks[i]] {
		i++
	}
	if i == start || vagueWords[toks[i-1]] || stopWords[toks[i-1]] {
		return -1
	}
	return i - 1
}

// determiners open a definition's noun phrase; phraseEnds close it: a
// relative pronoun, a preposition or a conjunction starts what tells the
// genus apart.
var determiners, phraseEnds = map[string]bool{}, map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the any`) {
		determiners[w] = true
	}
	for _, w := range strings.Fields(`who whom whose which that of in on at for from with without by to as
or and but when where while especially usually often is are was be being having`) {
		phraseEnds[w] = true
	}
}

// antonyms are the synsets opposite to id or to the head it is similar
// to: a second hop can reach them ("glum" must not carry "elated"), and
// a word must not meet the concept it is the opposite of.
func antonyms(wn *wordnet, id synsetID) []synsetID {
	var out []synsetID
	ss := wn.synsets[id]
	for _, p := range ss.pointers {
		if p.symbol == "!" {
			out = append(out, p.target)
		}
		if p.symbol == "&" && ss.satellite {
			if h := wn.synsets[p.target]; h != nil {
				for _, hp := range h.pointers {
					if hp.symbol == "!" {
						out = append(out, hp.target)
					}
				}
			}
		}
	}
	return out
}
