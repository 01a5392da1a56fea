package embed_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"broll/embed"
	"broll/embed/embedtest"
)

func newOllama(t *testing.T, host string, opts embed.OllamaOptions) *embed.Ollama {
	t.Helper()
	opts.Host = host
	o, err := embed.NewOllama(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOllamaPrefixesByKind(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewOllama(t, embedtest.Options{})
	o := newOllama(t, srv.URL, embed.OllamaOptions{})
	if o.Model() != "nomic-embed-text" {
		t.Fatalf("default model = %q", o.Model())
	}
	ctx := context.Background()
	docs, err := o.Embed(ctx, embed.Document, []string{"woman laughing"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(ctx, embed.Query, []string{"lady giggling"}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Input; !slices.Equal(got, []string{"search_document: woman laughing"}) {
		t.Errorf("document input = %q", got)
	}
	if got := reqs[1].Input; !slices.Equal(got, []string{"search_query: lady giggling"}) {
		t.Errorf("query input = %q", got)
	}
	if reqs[0].Model != "nomic-embed-text" {
		t.Errorf("model sent = %q", reqs[0].Model)
	}
	if want := embedtest.Vector("search_document: woman laughing", 768); !closeTo(docs[0], want) {
		t.Error("vector is not the server's")
	}
}

func TestOllamaPrefixesFollowModel(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewOllama(t, embedtest.Options{Models: []string{"nomic-embed-text:v1.5", "other-768"}})
	ctx := context.Background()
	if _, err := newOllama(t, srv.URL, embed.OllamaOptions{Model: "nomic-embed-text:v1.5"}).Embed(ctx, embed.Query, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := newOllama(t, srv.URL, embed.OllamaOptions{Model: "other-768"}).Embed(ctx, embed.Query, []string{"q"}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if reqs[0].Input[0] != "search_query: q" {
		t.Errorf("tagged nomic model input = %q", reqs[0].Input[0])
	}
	if reqs[1].Input[0] != "q" {
		t.Errorf("model without task prefixes got %q", reqs[1].Input[0])
	}
}

func TestOllamaBatches(t *testing.T) {
	t.Parallel()
	srv := embedtest.NewOllama(t, embedtest.Options{})
	o := newOllama(t, srv.URL, embed.OllamaOptions{BatchSize: 4})
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("clip %d", i)
	}
	vs, err := o.Embed(context.Background(), embed.Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 10 {
		t.Fatalf("%d vectors, want 10", len(vs))
	}
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	if !slices.Equal(sizes, []int{4, 4, 2}) {
		t.Errorf("batch sizes = %v, want [4 4 2]", sizes)
	}
	// Order is kept across batches.
	for i, v := range vs {
		if !closeTo(v, embedtest.Vector("search_document: "+texts[i], 768)) {
			t.Errorf("vector %d belongs to another text", i)
		}
	}
	if vs, err := o.Embed(context.Background(), embed.Document, nil); err != nil || len(vs) != 0 {
		t.Errorf("no texts: %v, %v", vs, err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("no texts made a request (%d requests)", n)
	}
}

func TestOllamaCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ok", func(t *testing.T) {
		srv := embedtest.NewOllama(t, embedtest.Options{})
		if err := newOllama(t, srv.URL, embed.OllamaOptions{}).Check(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong dimensions refused", func(t *testing.T) {
		srv := embedtest.NewOllama(t, embedtest.Options{Models: []string{"mxbai-embed-large"}, Dims: 1024})
		err := newOllama(t, srv.URL, embed.OllamaOptions{Model: "mxbai-embed-large"}).Check(ctx)
		if !errors.Is(err, embed.ErrDimensions) {
			t.Fatalf("err = %v, want ErrDimensions", err)
		}
		if !strings.Contains(err.Error(), "1024") || !strings.Contains(err.Error(), "768") {
			t.Errorf("message does not name both widths: %v", err)
		}
	})
	t.Run("missing model", func(t *testing.T) {
		srv := embedtest.NewOllama(t, embedtest.Options{Models: []string{"llama3"}})
		err := newOllama(t, srv.URL, embed.OllamaOptions{}).Check(ctx)
		if !errors.Is(err, embed.ErrModelNotFound) {
			t.Fatalf("err = %v, want ErrModelNotFound", err)
		}
		if want := "model nomic-embed-text not found: run `ollama pull nomic-embed-text`"; !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	})
	t.Run("server error surfaced", func(t *testing.T) {
		srv := embedtest.NewOllama(t, embedtest.Options{})
		srv.Fail(http.StatusInternalServerError)
		err := newOllama(t, srv.URL, embed.OllamaOptions{}).Check(ctx)
		if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "fake failure") {
			t.Fatalf("err = %v, want the status and the server's message", err)
		}
		if errors.Is(err, embed.ErrModelNotFound) {
			t.Error("a 500 is not a missing model")
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		err := newOllama(t, closedURL(t), embed.OllamaOptions{}).Check(ctx)
		if err == nil {
			t.Fatal("want an error from a closed port")
		}
	})
}

func TestOllamaRequestTimeout(t *testing.T) {
	t.Parallel()
	// A server that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	o := newOllama(t, "http://"+ln.Addr().String(), embed.OllamaOptions{Timeout: 100 * time.Millisecond})
	// The caller's deadline is far beyond the client's Timeout: a deadline
	// error while the caller's context is still alive is the client's own.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = o.Embed(ctx, embed.Query, []string{"q"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call ran until the caller's deadline: the client's Timeout did not end it")
	}
}

func TestNewOllamaRejectsBadHost(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"", "localhost:11434", "::"} {
		if _, err := embed.NewOllama(embed.OllamaOptions{Host: h}); err == nil {
			t.Errorf("host %q accepted", h)
		}
	}
}

// closedURL is the address of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

func closeTo(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-5 || d < -1e-5 {
			return false
		}
	}
	return true
}
