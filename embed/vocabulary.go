package embed

import (
	"fmt"
	"slices"

	"broll/internal/vocab"
)

// vocabulary is the built-in embedder's concepts, one reserved dimension
// each (internal/vocab, which the lexicon generator reads too).
var vocabulary = vocab.Concepts

// thesaurus grades more words for the concepts (internal/vocab).
var thesaurus = vocab.Thesaurus

// conceptIndex is the dimension of the concept named name.
func conceptIndex(name string) int {
	i := slices.IndexFunc(vocabulary, func(c vocab.Concept) bool { return c.Name == name })
	if i < 0 {
		panic(fmt.Sprintf("embed: the thesaurus names concept %q, which the vocabulary lacks", name))
	}
	return i
}
