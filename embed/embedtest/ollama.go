// Package embedtest stands in for Ollama in tests: an HTTP server speaking
// the /api/embed protocol with deterministic vectors, failure modes that can
// be switched on and off, and a record of what it was asked. Tests replace
// only Ollama this way; Postgres and Redis stay real.
package embedtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Request is one /api/embed call as the server received it.
type Request struct {
	Model string
	Input []string
}

// Options shape the fake server. Zero values take defaults.
type Options struct {
	Models []string // installed models; ["nomic-embed-text"] if empty
	Dims   int      // vector width; 768 if zero
}

// Ollama is a running fake. Its methods are safe for concurrent use.
type Ollama struct {
	URL string

	models []string
	dims   int

	mu       sync.Mutex
	requests []Request
	status   int // non-zero: answer every embed request with this status
}

// NewOllama starts a fake server that is closed when the test ends.
func NewOllama(t testing.TB, opts Options) *Ollama {
	t.Helper()
	if len(opts.Models) == 0 {
		opts.Models = []string{"nomic-embed-text"}
	}
	if opts.Dims == 0 {
		opts.Dims = 768
	}
	o := &Ollama{models: opts.Models, dims: opts.Dims}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", o.embed)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.12.0"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o.URL = srv.URL
	return o
}

// Fail makes every following embed request answer with status (and an
// Ollama-style error body); Fail(0) heals the server.
func (o *Ollama) Fail(status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.status = status
}

// Requests returns the embed requests received so far.
func (o *Ollama) Requests() []Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.requests)
}

func (o *Ollama) embed(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	// Ollama accepts one string or a list of strings.
	var input []string
	if err := json.Unmarshal(body.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(body.Input, &one); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
			return
		}
		input = []string{one}
	}

	o.mu.Lock()
	o.requests = append(o.requests, Request{Model: body.Model, Input: input})
	status := o.status
	o.mu.Unlock()

	if status != 0 {
		writeJSON(w, status, map[string]string{"error": fmt.Sprintf("fake failure (status %d)", status)})
		return
	}
	if !slices.Contains(o.models, body.Model) {
		writeJSON(w, http.StatusNotFound, map[string]string{
			"error": fmt.Sprintf("model %q not found, try pulling it first", body.Model)})
		return
	}
	embs := make([][]float32, len(input))
	for i, text := range input {
		embs[i] = Vector(text, o.dims)
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": body.Model, "embeddings": embs})
}

// Vector is the unit vector the fake gives text: deterministic, and
// different texts point in different directions.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	seed := h.Sum64() | 1 // xorshift never leaves zero
	var sum float64
	for i := range v {
		// xorshift64: cheap, deterministic pseudo-random components.
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		x := float64(int64(seed%2001)-1000) / 1000
		v[i] = float32(x)
		sum += x * x
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
