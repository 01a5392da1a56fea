package embed_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"broll/embed"
	"broll/embed/ollamatest"
)

// The tests of this file run the Ollama embedder against a real `ollama
// serve` (embed/ollamatest) with a small model of nomic-embed-text's
// architecture: the server's protocol, batching, limits and errors are
// real; only the weights are random.

// realContext is the test model's context: longer input is truncated.
const realContext = 128

// startRealOllama starts a server with the test model installed as
// nomic-embed-text.
func startRealOllama(t *testing.T, opts ollamatest.Options) *ollamatest.Server {
	t.Helper()
	srv := ollamatest.Start(t, opts)
	srv.Create(t, embed.DefaultModel, ollamatest.ModelSpec{Seed: 42, ContextLength: realContext})
	return srv
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestOllamaServer(t *testing.T) {
	t.Parallel()
	srv := startRealOllama(t, ollamatest.Options{NumParallel: 1})
	ctx := context.Background()

	t.Run("batches keep their order and give unit 768-dim vectors", func(t *testing.T) {
		texts := make([]string, 21)
		for i := range texts {
			texts[i] = strings.Repeat("aerial drone shot of a city ", i%4+1) + string(rune('a'+i))
		}
		batched := newOllama(t, srv.URL, embed.OllamaOptions{BatchSize: 8})
		vecs, err := batched.Embed(ctx, embed.Document, texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(texts) {
			t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != embed.Dimensions {
				t.Fatalf("vector %d has %d dims, want %d", i, len(v), embed.Dimensions)
			}
			if n := cosine(v, v); math.Abs(n-1) > 1e-4 {
				t.Fatalf("vector %d: cosine with itself %v", i, n)
			}
		}
		// Each vector is its own text's: the same as embedding the text
		// alone, and not another text's.
		one := newOllama(t, srv.URL, embed.OllamaOptions{BatchSize: 1})
		for _, i := range []int{0, 7, 8, 20} {
			alone, err := one.Embed(ctx, embed.Document, texts[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			if c := cosine(alone[0], vecs[i]); c < 0.9999 {
				t.Errorf("text %d: batched vector differs from the one embedded alone (cosine %v)", i, c)
			}
			if c := cosine(alone[0], vecs[(i+1)%len(vecs)]); c > 0.9999 {
				t.Errorf("text %d: vector equals its neighbour's (cosine %v)", i, c)
			}
		}
	})

	t.Run("queries and documents get their own prefixes", func(t *testing.T) {
		o := newOllama(t, srv.URL, embed.OllamaOptions{})
		q, err := o.Embed(ctx, embed.Query, []string{"a person smiling at the camera"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := o.Embed(ctx, embed.Document, []string{"a person smiling at the camera"})
		if err != nil {
			t.Fatal(err)
		}
		if c := cosine(q[0], d[0]); c > 0.9999 {
			t.Fatalf("query and document vectors of one text are the same (cosine %v): no task prefix", c)
		}
		if err := o.Check(ctx); err != nil {
			t.Fatalf("check: %v", err)
		}
	})

	t.Run("input over the context is truncated by the server", func(t *testing.T) {
		o := newOllama(t, srv.URL, embed.OllamaOptions{})
		// The server keeps the context's tokens less [CLS] and [SEP]: the
		// prefix "search_document: " (4 tokens) and one per word.
		kept := realContext - 2 - 4
		head := make([]string, kept)
		for i := range head {
			head[i] = []string{"city", "night", "traffic", "rain", "street", "car", "road"}[i%7]
		}
		tail := strings.Repeat(" dog cat bird", realContext)
		long, err := o.Embed(ctx, embed.Document, []string{strings.Join(head, " ") + tail})
		if err != nil {
			t.Fatalf("over-context input: %v", err)
		}
		// The control differs from the head only in its last ten words.
		control := slices.Clone(head)
		copy(control[kept-10:], strings.Fields(tail))
		want, err := o.Embed(ctx, embed.Document, []string{strings.Join(head, " "), strings.Join(control, " ")})
		if err != nil {
			t.Fatal(err)
		}
		// The vector is the first words' and not one word more: far
		// closer to it than to a text ten words different.
		if d, dControl := 1-cosine(long[0], want[0]), 1-cosine(long[0], want[1]); d > dControl/100 {
			t.Errorf("over-context vector is not that of its first %d words: distance %.3g, to a text ten words off %.3g", kept, d, dControl)
		}
	})

	t.Run("a model that is not there", func(t *testing.T) {
		o := newOllama(t, srv.URL, embed.OllamaOptions{Model: "nomic-embed-text-absent"})
		_, err := o.Embed(ctx, embed.Query, []string{"anything"})
		if !errors.Is(err, embed.ErrModelNotFound) {
			t.Fatalf("err = %v, want ErrModelNotFound", err)
		}
		if !strings.Contains(err.Error(), "ollama pull nomic-embed-text-absent") {
			t.Errorf("error does not say how to install the model: %v", err)
		}
		if err := o.Check(ctx); !errors.Is(err, embed.ErrModelNotFound) {
			t.Errorf("check: %v, want ErrModelNotFound", err)
		}
	})

	t.Run("concurrent requests beyond the server's parallelism all finish", func(t *testing.T) {
		o := newOllama(t, srv.URL, embed.OllamaOptions{Timeout: time.Minute})
		var wg sync.WaitGroup
		errs := make([]error, 6)
		start := time.Now()
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = o.Embed(ctx, embed.Document, []string{"coffee in the office", "a dog on the beach", string(rune('a' + i))})
			})
		}
		wg.Wait()
		t.Logf("6 concurrent requests of 3 texts in %s", time.Since(start).Round(time.Millisecond))
		for i, err := range errs {
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
		}
	})
}
