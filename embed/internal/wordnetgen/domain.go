package main

import "broll/internal/vocab"

// domainBonus makes a feature that a phrase of the embedder's vocabulary
// carries count 1+domainBonus times as specific when a sense's features are
// chosen: of "grumpy"'s many neighbours, "annoyed", which the vocabulary
// knows, is kept before "crabbiness", which meets nothing a search for
// clips says.
const domainBonus = 3.0

// domainFeatures is every feature of every sense of the vocabulary's
// phrases (internal/vocab).
func domainFeatures(byKey map[string]*entry) map[synsetID]bool {
	out := map[synsetID]bool{}
	for _, c := range vocab.Concepts {
		for _, p := range c.Phrases {
			for _, pos := range "nvar" {
				e := byKey[phrase(p)+"/"+string(pos)]
				if e == nil {
					continue
				}
				for _, s := range e.senses {
					for f := range s.features {
						out[f] = true
					}
				}
			}
		}
	}
	return out
}
