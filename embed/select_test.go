package embed_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"broll/embed"
	"broll/embed/embedtest"
)

func TestSelect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := embedtest.NewOllama(t, embedtest.Options{})
	noModel := embedtest.NewOllama(t, embedtest.Options{Models: []string{"llama3"}})
	wide := embedtest.NewOllama(t, embedtest.Options{Dims: 1024})
	broken := embedtest.NewOllama(t, embedtest.Options{})
	broken.Fail(http.StatusInternalServerError)
	down := closedURL(t)

	cases := []struct {
		name, provider, host string
		wantModel            string // "" means an error is wanted
		wantErr              error
		wantLog              string
	}{
		{"builtin", "builtin", down, "builtin-lexical-v6", nil, "BROLL_EMBED_PROVIDER=builtin"},
		{"ollama up", "ollama", up.URL, "nomic-embed-text", nil, `"provider":"ollama"`},
		{"ollama with a 1024-dim model", "ollama", wide.URL, "", embed.ErrDimensions, ""},
		{"ollama down", "ollama", down, "", nil, ""},
		{"auto with ollama up", "auto", up.URL, "nomic-embed-text", nil, "Ollama answered"},
		{"auto with ollama down", "auto", down, "builtin-lexical-v6", nil, "connection refused"},
		{"auto without the model", "auto", noModel.URL, "builtin-lexical-v6", nil, "ollama pull nomic-embed-text"},
		{"auto with a broken server", "auto", broken.URL, "builtin-lexical-v6", nil, "500"},
		{"auto with a 1024-dim model", "auto", wide.URL, "builtin-lexical-v6", nil, "1024"},
		{"unknown provider", "openai", up.URL, "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			// Select bounds its own checks and retries; it must answer
			// before a caller's generous deadline ends it.
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			e, err := embed.Select(ctx, c.provider, embed.OllamaOptions{Host: c.host, Model: "nomic-embed-text"}, logger)
			if ctx.Err() != nil {
				t.Fatalf("Select ran until the caller's deadline (%v)", err)
			}
			if c.wantModel == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", e.Model())
				}
				if c.wantErr != nil && !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Model() != c.wantModel {
				t.Errorf("model = %q, want %q", e.Model(), c.wantModel)
			}
			if !strings.Contains(logs.String(), "embedder selected") || !strings.Contains(logs.String(), c.wantLog) {
				t.Errorf("log %s does not say which embedder and why (%q)", logs.String(), c.wantLog)
			}
			vs, err := e.Embed(ctx, embed.Query, []string{"woman smiling"})
			if err != nil || len(vs[0]) != embed.Dimensions {
				t.Errorf("selected embedder does not work: %v", err)
			}
		})
	}
}

// TestSelectOllamaWithoutTheModel: a server without the model is not a
// reason to exit (a restart policy would loop on it): the embedder is
// returned, the missing model logged as an error with how to install it,
// and every call fails with ErrModelNotFound until it is installed.
func TestSelectOllamaWithoutTheModel(t *testing.T) {
	t.Parallel()
	noModel := embedtest.NewOllama(t, embedtest.Options{Models: []string{"llama3"}})
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	e, err := embed.Select(context.Background(), "ollama", embed.OllamaOptions{Host: noModel.URL, Model: "nomic-embed-text"}, logger)
	if err != nil {
		t.Fatalf("Select: %v", err)
	}
	if e.Model() != "nomic-embed-text" {
		t.Fatalf("model = %q", e.Model())
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), "ollama pull nomic-embed-text") {
		t.Errorf("log %s does not report the missing model as an error with how to install it", logs.String())
	}
	if _, err := e.Embed(context.Background(), embed.Query, []string{"woman smiling"}); !errors.Is(err, embed.ErrModelNotFound) {
		t.Fatalf("embed: %v, want ErrModelNotFound", err)
	}
}

func TestSelectNilLogger(t *testing.T) {
	t.Parallel()
	if _, err := embed.Select(context.Background(), "builtin", embed.OllamaOptions{}, nil); err != nil {
		t.Fatal(err)
	}
}
