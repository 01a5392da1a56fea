package embed

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"
)

// autoCheckTimeout bounds how long "auto" waits for Ollama at start. A
// missing server refuses the connection at once; the time is for a server
// that is up and has to load the model for the probe.
const autoCheckTimeout = 10 * time.Second

// Select returns the embedder for provider (BROLL_EMBED_PROVIDER):
//   - "builtin": the built-in lexical embedder;
//   - "ollama": Ollama at host with model, or an error if its Check fails;
//   - "auto": Ollama if its Check passes within a few seconds, else builtin.
//
// It logs which one it chose and why, because the two make incomparable
// vectors and an operator must be able to tell which one a node runs.
func Select(ctx context.Context, provider, host, model string, logger *slog.Logger) (Embedder, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	switch provider {
	case "builtin":
		b := NewBuiltin()
		logger.Info("embedder selected", "provider", "builtin", "model", b.Model(),
			"reason", "BROLL_EMBED_PROVIDER=builtin")
		return b, nil
	case "ollama":
		o, err := NewOllama(OllamaOptions{Host: host, Model: model})
		if err != nil {
			return nil, fmt.Errorf("select embedder: %w", err)
		}
		// A worker or node starting beside a model server that is up should
		// not die of one dropped connection: the check is tried three times.
		err = o.Check(ctx)
		for wait := 200 * time.Millisecond; err != nil && wait <= 400*time.Millisecond && ctx.Err() == nil; wait *= 2 {
			logger.Warn("ollama check failed; trying again", "err", err, "in", wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
				err = o.Check(ctx)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("select embedder: BROLL_EMBED_PROVIDER=ollama: %w", err)
		}
		logger.Info("embedder selected", "provider", "ollama", "model", o.Model(), "host", o.host,
			"reason", "BROLL_EMBED_PROVIDER=ollama and the model answered")
		return o, nil
	case "auto":
		o, err := NewOllama(OllamaOptions{Host: host, Model: model})
		if err == nil {
			checkCtx, cancel := context.WithTimeout(ctx, autoCheckTimeout)
			err = o.Check(checkCtx)
			cancel()
		}
		if err == nil {
			logger.Info("embedder selected", "provider", "ollama", "model", o.Model(), "host", o.host,
				"reason", "BROLL_EMBED_PROVIDER=auto and Ollama answered with the model")
			return o, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("select embedder: %w", ctx.Err())
		}
		b := NewBuiltin()
		logger.Warn("embedder selected", "provider", "builtin", "model", b.Model(),
			"reason", "BROLL_EMBED_PROVIDER=auto and Ollama is not usable: "+err.Error(),
			"hint", "semantic search is lexical only; run Ollama and `ollama pull "+cmp.Or(model, DefaultModel)+"` for real semantic search")
		return b, nil
	default:
		return nil, fmt.Errorf("select embedder: provider must be auto, ollama or builtin, got %q", provider)
	}
}
