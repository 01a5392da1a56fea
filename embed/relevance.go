package embed

// defaultRelevanceFloor is the floor of a model that names none; it suits
// nomic-embed-text, whose query and document vectors of unrelated texts
// mostly score well below it.
const defaultRelevanceFloor = 0.5

// RelevanceFloor is the cosine similarity under which a match by meaning
// from e's model is noise rather than a weak match. It differs per model:
// the built-in embedder puts unrelated texts near 0, neural models well
// above 0.
func RelevanceFloor(e Embedder) float64 {
	if f, ok := e.(interface{ RelevanceFloor() float64 }); ok {
		return f.RelevanceFloor()
	}
	return defaultRelevanceFloor
}

// RelevanceFloor of the built-in embedder: unrelated texts share no
// concept or word and score about 0; one shared concept scores well above
// 0.2.
func (b *Builtin) RelevanceFloor() float64 { return 0.2 }

// RelevanceFloor is the floor of the embedder behind the cache.
func (c *QueryCache) RelevanceFloor() float64 { return RelevanceFloor(c.embedder) }
