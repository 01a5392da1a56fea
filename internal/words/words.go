// Package words is what the built-in embedder and its WordNet table
// generator (embed/internal/wordnetgen) must agree on: how text becomes
// words, and how a word's inflection is taken off. The table is looked up
// with the words the embedder makes of a search, so both sides use these.
package words

import (
	"strings"
	"unicode"
)

// Tokenize lowercases text and splits it into words of letters and digits.
// Apostrophes are dropped rather than split on, so "can't" is "cant" and
// "driver's_seat" is "drivers", "seat".
func Tokenize(text string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '\u2019':
		default:
			flush()
		}
	}
	flush()
	return toks
}

// MorphRule takes Suffix off a word of part of speech POS ('n', 'v', 'a')
// and puts Ending in its place.
type MorphRule struct {
	Suffix, Ending string
	POS            byte
}

// MorphRules are WordNet's detachment rules (morphy(7WN)).
var MorphRules = []MorphRule{
	{"s", "", 'n'}, {"ses", "s", 'n'}, {"xes", "x", 'n'}, {"zes", "z", 'n'}, {"ches", "ch", 'n'},
	{"shes", "sh", 'n'}, {"men", "man", 'n'}, {"ies", "y", 'n'},
	{"s", "", 'v'}, {"ies", "y", 'v'}, {"es", "e", 'v'}, {"es", "", 'v'}, {"ed", "e", 'v'},
	{"ed", "", 'v'}, {"ing", "e", 'v'}, {"ing", "", 'v'},
	{"er", "", 'a'}, {"est", "", 'a'}, {"er", "e", 'a'}, {"est", "e", 'a'},
}
