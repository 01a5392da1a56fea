package embed

import "broll/internal/vocab"

// vocabulary is the built-in embedder's concepts, one reserved dimension
// each (internal/vocab, which the lexicon generator reads too).
var vocabulary = vocab.Concepts
