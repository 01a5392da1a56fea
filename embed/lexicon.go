package embed

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the lexicon file
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"broll/internal/words"
)

// wordnetLexicon is generated from WordNet 3.0 by embed/internal/wordnetgen
// (`make embed-lexicon` or `go generate ./embed`, both needing Debian's
// wordnet-base); lexicon/README.md says what is in it and how to
// regenerate it, lexicon/LICENSE-WordNet under which licence.
//
//go:generate go run ./internal/wordnetgen -dict /usr/share/wordnet -out lexicon/wordnet.bin.gz
//go:embed lexicon/wordnet.bin.gz
var wordnetLexicon []byte

// lexiconMagic starts the lexicon (embed/internal/wordnetgen/encode.go).
const lexiconMagic = "broll-lexicon-2\n"

// lexFeature is one meaning (a WordNet synset, numbered by the generator)
// that a phrase carries, with its weight.
type lexFeature struct {
	id uint32
	w  float32
}

// lexEntry is a phrase's meanings in each part of speech (noun, verb,
// adjective, adverb) and how common each part of speech is for it: feats
// merges the senses, each weighed by how common it is or, if more, by how
// closely it meets the vocabulary (see preferDomain).
type lexEntry struct {
	share  [4]float32
	feats  [4][]lexFeature
	senses [4][]lexSense
}

// lexSense is one sense of a phrase: how common it is among the phrase's
// senses (1 for the commonest) and its meanings.
type lexSense struct {
	w     float32
	feats []lexFeature
}

// lexicon maps phrases of one to three words to the meanings they share
// with other phrases, and irregular forms to their base words.
type lexicon struct {
	phrases map[string]*lexEntry
	// idf is each feature's rarity: near 1 for one that two entries
	// carry, falling towards 0 for one that every entry carries.
	idf       []float32
	forms     map[string][]string // "form/pos" -> base words
	maxTokens int
}

// loadLexicon parses the embedded lexicon once per process: every Builtin
// reads the same immutable tables.
var loadLexicon = sync.OnceValue(func() *lexicon {
	lx, err := parseLexicon(wordnetLexicon)
	if err != nil {
		// The file is part of the binary; a broken one is a build defect.
		panic(fmt.Sprintf("embed: lexicon: %v", err))
	}
	lx.preferDomain()
	return lx
})

// posIndex numbers the parts of speech as the lexicon does.
func posIndex(p byte) int { return strings.IndexByte("nvar", p) }

func parseLexicon(gz []byte) (*lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	r := &lexReader{b: raw}
	if !bytes.HasPrefix(raw, []byte(lexiconMagic)) {
		return nil, errors.New("not a lexicon of this version")
	}
	r.i = len(lexiconMagic)
	lx := &lexicon{forms: map[string][]string{}}

	entries := float64(r.uvarint())
	for range r.uvarint() {
		df, run := r.uvarint(), r.uvarint()
		if df < 1 || entries < 2 {
			return nil, errors.New("bad feature counts")
		}
		idf := float32(math.Log(entries/float64(df)) / math.Log(entries))
		for range run {
			lx.idf = append(lx.idf, idf)
		}
	}

	n := r.uvarint()
	lx.phrases = make(map[string]*lexEntry, n)
	all := make([]lexEntry, n)
	var feats []lexFeature // one backing array for every entry's features
	var prev string
	for i := range all {
		p := r.frontCoded(prev)
		prev = p
		mask := r.byte()
		e := &all[i]
		for pi := range 4 {
			if mask&(1<<pi) == 0 {
				continue
			}
			e.share[pi] = float32(r.byte()) / 15
			e.senses[pi] = make([]lexSense, r.byte())
			for si := range e.senses[pi] {
				w := float32(r.byte()) / 15
				start := len(feats)
				if feats, err = r.features(feats, len(lx.idf)); err != nil {
					return nil, fmt.Errorf("phrase %q: %w", p, err)
				}
				e.senses[pi][si] = lexSense{w: w, feats: feats[start:len(feats):len(feats)]}
			}
			e.mergeSenses(pi, func(s lexSense) float32 { return s.w })
		}
		lx.phrases[p] = e
		lx.maxTokens = max(lx.maxTokens, strings.Count(p, " ")+1)
	}

	prev = ""
	for range r.uvarint() {
		form := r.frontCoded(prev)
		prev = form
		pos := r.byte()
		bases := make([]string, r.byte())
		for j := range bases {
			bases[j] = r.string(r.uvarint())
		}
		if pos > 3 {
			return nil, fmt.Errorf("form %q: bad part of speech", form)
		}
		lx.forms[form+"/"+string("nvar"[pos])] = bases
	}
	if r.err != nil || r.i != len(raw) {
		return nil, errors.New("truncated or trailing data")
	}
	return lx, zr.Close()
}

// lexReader reads the lexicon's varints, bytes and strings; past the end it
// reads zeros and records the error, which parseLexicon checks once.
type lexReader struct {
	b   []byte
	i   int
	err error
}

func (r *lexReader) uvarint() int {
	v, n := binary.Uvarint(r.b[min(r.i, len(r.b)):])
	if n <= 0 {
		r.err = errors.New("bad varint")
		r.i = len(r.b)
		return 0
	}
	r.i += n
	return int(v)
}

func (r *lexReader) byte() byte {
	if r.i >= len(r.b) {
		r.err = errors.New("truncated")
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *lexReader) string(n int) string {
	if r.i+n > len(r.b) {
		r.err = errors.New("truncated")
		r.i = len(r.b)
		return ""
	}
	r.i += n
	return string(r.b[r.i-n : r.i])
}

// features appends a sense's meanings to feats: their count, then each
// number's delta and its weight. Numbers must be below n.
func (r *lexReader) features(feats []lexFeature, n int) ([]lexFeature, error) {
	var id uint32
	for range r.byte() {
		v := r.uvarint()
		id += uint32(v >> 4)
		if int(id) >= n || v&15 == 0 {
			return feats, errors.New("bad feature")
		}
		feats = append(feats, lexFeature{id: id, w: float32(v&15) / 15})
	}
	return feats, nil
}

// mergeSenses sets the meanings of part of speech pi to those of its
// senses, each sense weighing weight(sense), relative to the heaviest
// sense; the part of speech weighs at least as much as that.
func (e *lexEntry) mergeSenses(pi int, weight func(lexSense) float32) {
	var top float32
	for _, s := range e.senses[pi] {
		top = max(top, weight(s))
	}
	if top == 0 {
		return
	}
	e.share[pi] = max(e.share[pi], min(1, top))
	if len(e.senses[pi]) == 1 {
		e.feats[pi] = e.senses[pi][0].feats // relative to itself, as read
		return
	}
	var out []lexFeature
	for _, s := range e.senses[pi] {
		out = mergeFeatures(out, s.feats, weight(s)/top)
	}
	e.feats[pi] = out
}

// mergeFeatures adds fs, weighed by scale, to out, a meaning in both
// keeping its heavier weight.
func mergeFeatures(out, fs []lexFeature, scale float32) []lexFeature {
next:
	for _, f := range fs {
		w := f.w * scale
		for i := range out {
			if out[i].id == f.id {
				out[i].w = max(out[i].w, w)
				continue next
			}
		}
		out = append(out, lexFeature{f.id, w})
	}
	return out
}

// frontCoded reads a string stored as a prefix of prev and the rest.
func (r *lexReader) frontCoded(prev string) string {
	shared := min(r.uvarint(), len(prev))
	return prev[:shared] + r.string(r.uvarint())
}

// features returns the meanings of the phrase toks: of the words as
// written, every part of speech weighed by how common it is; then, for an
// inflected last word (or first, for verb phrases like "pumping iron"),
// those of its base form in the part of speech the inflection implies
// (WordNet's morphology: irregular forms, then suffix rules). Meanings
// are merged by the heaviest weight; nil means the lexicon lacks the
// phrase.
func (lx *lexicon) features(toks []string) []lexFeature {
	var out []lexFeature
	merge := func(fs []lexFeature, scale float32) { out = mergeFeatures(out, fs, scale) }
	joined := strings.Join(toks, " ")
	if e := lx.phrases[joined]; e != nil {
		for pi := range e.feats {
			merge(e.feats[pi], e.share[pi])
		}
	}
	last := len(toks) - 1
	for pi, pos := range "nvar" {
		if b := lx.base(toks, last, byte(pos)); b != nil {
			merge(b.feats[pi], 1)
		} else if last > 0 && pos == 'v' {
			if b := lx.base(toks, 0, 'v'); b != nil {
				merge(b.feats[pi], 1)
			}
		}
	}
	return out
}

// base returns the entry of toks with word i in its base form for part of
// speech pos, if the lexicon has one.
func (lx *lexicon) base(toks []string, i int, pos byte) *lexEntry {
	w := toks[i]
	try := func(b string) *lexEntry {
		if b == w {
			return nil
		}
		alt := slices.Clone(toks)
		alt[i] = b
		if e := lx.phrases[strings.Join(alt, " ")]; e != nil && len(e.feats[posIndex(pos)]) > 0 {
			return e
		}
		return nil
	}
	for _, b := range lx.forms[w+"/"+string(pos)] {
		if e := try(b); e != nil {
			return e
		}
	}
	for _, r := range words.MorphRules {
		if r.POS != pos || len(w) <= len(r.Suffix)+1 || !strings.HasSuffix(w, r.Suffix) {
			continue
		}
		b := w[:len(w)-len(r.Suffix)] + r.Ending
		if e := try(b); e != nil {
			return e
		}
		// A doubled final consonant: grinning -> grin.
		if u := undouble(b); r.Ending == "" && u != b {
			if e := try(u); e != nil {
				return e
			}
		}
	}
	return nil
}
