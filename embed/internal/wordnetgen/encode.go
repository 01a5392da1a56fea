package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
)

// magic starts the lexicon; embed/lexicon.go refuses any other.
const magic = "broll-lexicon-2\n"

// encode writes the lexicon in the format embed/lexicon.go reads (before
// gzip), all numbers unsigned varints unless a byte:
//
//	magic
//	E                       entries, for the rarity of features
//	R, R × (df, run)        features numbered from 0: run of them carried by df entries each
//	P                       phrases, sorted
//	P × (shared, n, n bytes     front-coded: shared bytes of the previous phrase, then n more
//	     byte mask              parts of speech present: 1 noun, 2 verb, 4 adjective, 8 adverb
//	     per part: byte share, byte s,
//	     s × senses (byte weight, byte k, k × (idDelta<<4 | weight)))
//	F                       irregular forms, sorted
//	F × (shared, n, n bytes, byte pos, byte b, b × (n, n bytes))
//
// share (0..15) weighs a part of speech when a word is looked up as
// written (0: only as the base of an inflected form), a sense's weight
// (1..15) the sense among the phrase's senses. Features are
// numbered in order of how many entries carry them, the commonest first,
// and listed in increasing order; weights are 1..15. The output depends
// only on the input.
func encode(entries []entry, exc map[string][]string) []byte {
	df := map[synsetID]int{}
	for _, e := range entries {
		for f := range e.union() {
			df[f]++
		}
	}
	feats := make([]synsetID, 0, len(df))
	for f := range df {
		feats = append(feats, f)
	}
	slices.SortFunc(feats, func(a, b synsetID) int {
		return cmp.Or(cmp.Compare(df[b], df[a]), cmp.Compare(a.pos, b.pos), cmp.Compare(a.offset, b.offset))
	})
	num := make(map[synsetID]int, len(feats))
	for i, f := range feats {
		num[f] = i
	}

	var w writer
	w.WriteString(magic)
	w.uvarint(len(entries))
	var runs [][2]int
	for i := 0; i < len(feats); {
		j := i
		for j < len(feats) && df[feats[j]] == df[feats[i]] {
			j++
		}
		runs = append(runs, [2]int{df[feats[i]], j - i})
		i = j
	}
	w.uvarint(len(runs))
	for _, r := range runs {
		w.uvarint(r[0])
		w.uvarint(r[1])
	}

	// Entries come sorted by phrase; each phrase's parts of speech are
	// written in mask bit order.
	var phrases []string
	byPhrase := map[string][]entry{}
	for _, e := range entries {
		if len(byPhrase[e.phrase]) == 0 {
			phrases = append(phrases, e.phrase)
		}
		byPhrase[e.phrase] = append(byPhrase[e.phrase], e)
	}
	for _, es := range byPhrase {
		slices.SortFunc(es, func(a, b entry) int {
			return cmp.Compare(strings.IndexByte("nvar", a.pos), strings.IndexByte("nvar", b.pos))
		})
	}
	w.uvarint(len(phrases))
	prev := ""
	for _, p := range phrases {
		w.frontCoded(prev, p)
		prev = p
		var mask byte
		for _, e := range byPhrase[p] {
			mask |= 1 << strings.IndexByte("nvar", e.pos)
		}
		w.WriteByte(mask)
		for _, e := range byPhrase[p] {
			w.WriteByte(byte(math.Round(e.share * weightLevels)))
			w.WriteByte(byte(len(e.senses)))
			for _, sf := range e.senses {
				w.WriteByte(byte(max(1, math.Round(sf.weight*weightLevels))))
				w.features(sf.features, num, feats)
			}
		}
	}

	forms := make([]string, 0, len(exc))
	for f := range exc {
		forms = append(forms, f)
	}
	slices.Sort(forms)
	w.uvarint(len(forms))
	prev = ""
	for _, key := range forms {
		form, pos, _ := strings.Cut(key, "/")
		w.frontCoded(prev, form)
		prev = form
		w.WriteByte(byte(strings.IndexByte("nvar", pos[0])))
		w.WriteByte(byte(len(exc[key])))
		for _, b := range exc[key] {
			w.uvarint(len(b))
			w.WriteString(b)
		}
	}
	return w.Bytes()
}

type writer struct{ bytes.Buffer }

// features writes a sense's features as their count and, in increasing
// order of their numbers, each number's delta and its weight.
func (w *writer) features(fs map[synsetID]float64, num map[synsetID]int, feats []synsetID) {
	ids := make([]int, 0, len(fs))
	for f := range fs {
		ids = append(ids, num[f])
	}
	slices.Sort(ids)
	w.WriteByte(byte(len(ids)))
	last := 0
	for _, id := range ids {
		w.uvarint((id-last)<<4 | int(math.Round(fs[feats[id]]*weightLevels)))
		last = id
	}
}

func (w *writer) uvarint(n int) {
	w.Write(binary.AppendUvarint(nil, uint64(n)))
}

// frontCoded writes s as the length of the prefix it shares with prev and
// the rest: sorted phrases share long prefixes.
func (w *writer) frontCoded(prev, s string) {
	shared := 0
	for shared < len(prev) && shared < len(s) && prev[shared] == s[shared] {
		shared++
	}
	w.uvarint(shared)
	w.uvarint(len(s) - shared)
	w.WriteString(s[shared:])
}
