package wiring

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"broll/catalog/media"
	"broll/embed"
	"broll/internal/config"
	"broll/internal/seal"
	"broll/internal/telemetry"
)

var partNames = []struct {
	part Parts
	name string
}{
	{Redis, "Redis"}, {Media, "Media"}, {Embedder, "Embedder"}, {Secrets, "Secrets"},
	{Replica, "Replica"}, {Delivery, "Delivery"}, {Fonts, "Fonts"},
}

// String names the parts, as in "Redis|Media".
func (p Parts) String() string {
	var names []string
	for _, n := range partNames {
		if p&n.part != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "no parts"
	}
	return strings.Join(names, "|")
}

// The parts a command needs alone, built as Open builds them.

// NewSealer derives the sealer of stored secrets from BROLL_SIGNING_KEY
// (and BROLL_SIGNING_KEY_PREVIOUS, which still opens).
func NewSealer(cfg config.Config) (*seal.Sealer, error) {
	return seal.New(cfg.SigningKey.Reveal(), cfg.SigningKeyPrevious.Reveal())
}

// NewTelemetry builds the tracer provider as Open does when Options has
// none: from the OTEL_* variables, or exporting to o.Exporter (tests).
// Its owner shuts it down.
func NewTelemetry(ctx context.Context, o telemetry.ProviderOptions) (*telemetry.Provider, error) {
	return telemetry.NewProvider(ctx, o)
}

// OpenMedia opens the media store BROLL_MEDIA_STORE names: the local
// directory or the S3 bucket (checked).
func OpenMedia(ctx context.Context, cfg config.Config) (media.Store, error) {
	return media.Open(ctx, cfg)
}

// SelectEmbedder selects the embedder BROLL_EMBED_PROVIDER names, checking
// Ollama when it may be used; it logs its choice on logger (nil: nowhere).
func SelectEmbedder(ctx context.Context, cfg config.Config, logger *slog.Logger) (embed.Embedder, error) {
	return selectEmbedder(ctx, cfg, logger, nil)
}

// selectEmbedder is SelectEmbedder whose Ollama calls are traced by tp.
func selectEmbedder(ctx context.Context, cfg config.Config, logger *slog.Logger, tp *telemetry.Provider) (embed.Embedder, error) {
	var client *http.Client
	if tp.On() {
		client = &http.Client{Transport: tp.HTTPTransport(nil)}
	}
	return embed.Select(ctx, cfg.EmbedProvider,
		embed.OllamaOptions{Host: cfg.OllamaHost, Model: cfg.EmbedModel, Timeout: cfg.EmbedTimeout, HTTPClient: client}, logger)
}
