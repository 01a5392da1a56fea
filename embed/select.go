package embed

import (
	"cmp"
	"context"
	"errors"
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
//   - "ollama": Ollama as opts say, or an error if its Check fails, except
//     for a model that is not installed yet: then the embedder is returned
//     and the error logged, so that a node or worker started before
//     `ollama pull` stays up (its clips wait, pending, and its semantic
//     searches answer 503) instead of exiting and restarting in a loop;
//   - "auto": Ollama if its Check passes within a few seconds, else builtin.
//
// It logs which one it chose and why, because the two make incomparable
// vectors and an operator must be able to tell which one a node runs.
func Select(ctx context.Context, provider string, opts OllamaOptions, logger *slog.Logger) (Embedder, error) {
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
		o, err := NewOllama(opts)
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
		if errors.Is(err, ErrModelNotFound) {
			logger.Error("embedder selected", "provider", "ollama", "model", o.Model(), "host", o.host,
				"reason", "BROLL_EMBED_PROVIDER=ollama, but the model is not installed: "+err.Error(),
				"hint", "clips stay pending and semantic search answers 503 until `ollama pull "+o.Model()+"` on the Ollama server")
			return o, nil
		}
		if err != nil {
			return nil, fmt.Errorf("select embedder: BROLL_EMBED_PROVIDER=ollama: %w", err)
		}
		logger.Info("embedder selected", "provider", "ollama", "model", o.Model(), "host", o.host,
			"reason", "BROLL_EMBED_PROVIDER=ollama and the model answered")
		return o, nil
	case "auto":
		o, err := NewOllama(opts)
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
			"hint", "semantic search is lexical only; run Ollama and `ollama pull "+cmp.Or(opts.Model, DefaultModel)+"` for real semantic search")
		return b, nil
	default:
		return nil, fmt.Errorf("select embedder: provider must be auto, ollama or builtin, got %q", provider)
	}
}
