// Package embed turns text into 768-dimensional vectors for semantic search.
// It owns the Embedder interface, the Ollama client (nomic-embed-text), a
// built-in lexical embedder that needs no model, and the Redis cache of query
// embeddings. It knows nothing about clips: callers hand it text.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Dimensions is the width of every vector the service stores and compares;
// the videos.embedding column is vector(768).
const Dimensions = 768

// Kind says what a text is for. Asymmetric models such as nomic-embed-text
// embed a clip description and a search query differently.
type Kind int

const (
	// Document is the text of something to be found (a clip).
	Document Kind = iota
	// Query is the text someone searches with.
	Query
)

// String names the kind for logs and errors.
func (k Kind) String() string {
	switch k {
	case Document:
		return "document"
	case Query:
		return "query"
	default:
		return fmt.Sprintf("kind(%d)", int(k))
	}
}

// Embedder makes one vector of Dimensions floats per text, in order.
// Vectors of different models are not comparable, so every stored vector
// records Model().
type Embedder interface {
	Embed(ctx context.Context, kind Kind, texts []string) ([][]float32, error)
	Model() string
}

// ErrModelNotFound is matched (errors.Is) by the error an embedder returns
// when its model is not installed.
var ErrModelNotFound = errors.New("embedding model not found")

// ModelNotFoundError names the missing model and how to install it.
type ModelNotFoundError struct {
	Model string
}

func (e *ModelNotFoundError) Error() string {
	return fmt.Sprintf("model %s not found: run `ollama pull %s`", e.Model, e.Model)
}

// Unwrap lets errors.Is(err, ErrModelNotFound) match.
func (e *ModelNotFoundError) Unwrap() error { return ErrModelNotFound }

// normalize scales v to unit length in place so that cosine similarity and
// inner product agree. A zero vector is left as it is.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
