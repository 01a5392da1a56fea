package embed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultModel is the Ollama model used when none is configured: 768 dims,
// small enough for a CPU, trained for search with task prefixes.
const DefaultModel = "nomic-embed-text"

const (
	defaultBatchSize      = 32
	defaultRequestTimeout = 60 * time.Second
)

// ErrDimensions is matched (errors.Is) when a model gives vectors of another
// width than Dimensions: they cannot be stored in vector(768).
var ErrDimensions = errors.New("wrong embedding dimensions")

// OllamaOptions configures an Ollama embedder. Zero values take defaults.
type OllamaOptions struct {
	Host       string        // base URL of the Ollama server, e.g. http://127.0.0.1:11434
	Model      string        // DefaultModel if empty
	BatchSize  int           // texts per /api/embed request, 32 if zero
	Timeout    time.Duration // per request; the first one also loads the model, so be generous
	HTTPClient *http.Client  // requests are bounded by Timeout through their context
}

// Ollama embeds through a local Ollama server's /api/embed.
type Ollama struct {
	client      *api.Client
	host        string // redacted, for errors and logs
	model       string
	batchSize   int
	timeout     time.Duration
	docPrefix   string
	queryPrefix string
}

// NewOllama returns an embedder for opts. It does not contact the server:
// call Check before relying on it.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	u, err := url.Parse(opts.Host)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ollama: host must be a URL such as http://127.0.0.1:11434")
	}
	opts.Model = cmp.Or(opts.Model, DefaultModel)
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultRequestTimeout
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	doc, query := taskPrefixes(opts.Model)
	return &Ollama{
		client:      api.NewClient(u, opts.HTTPClient),
		host:        u.Redacted(),
		model:       opts.Model,
		batchSize:   opts.BatchSize,
		timeout:     opts.Timeout,
		docPrefix:   doc,
		queryPrefix: query,
	}, nil
}

// taskPrefixes returns the prefixes a model was trained with to tell search
// documents from search queries. Without them nomic-embed-text ranks
// noticeably worse; other models get the text as it is.
func taskPrefixes(model string) (doc, query string) {
	name, _, _ := strings.Cut(path.Base(model), ":")
	if strings.HasPrefix(name, "nomic-embed-text") {
		return "search_document: ", "search_query: "
	}
	return "", ""
}

// Model names the vectors this embedder makes.
func (o *Ollama) Model() string { return o.model }

// Embed sends texts in batches of BatchSize, each request with its own
// timeout, and checks that every vector has Dimensions components.
func (o *Ollama) Embed(ctx context.Context, kind Kind, texts []string) ([][]float32, error) {
	prefix := o.docPrefix
	if kind == Query {
		prefix = o.queryPrefix
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batchSize {
		batch := texts[start:min(start+o.batchSize, len(texts))]
		input := make([]string, len(batch))
		for i, t := range batch {
			input[i] = prefix + t
		}
		vs, err := o.embedBatch(ctx, input)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (o *Ollama) embedBatch(parent context.Context, input []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	resp, err := o.client.Embed(ctx, &api.EmbedRequest{Model: o.model, Input: input})
	if err != nil {
		if parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("ollama embed: no answer from %s within %s: %w", o.host, o.timeout, err)
		}
		return nil, o.explain(err)
	}
	if len(resp.Embeddings) != len(input) {
		return nil, fmt.Errorf("ollama embed: %d vectors for %d texts", len(resp.Embeddings), len(input))
	}
	for _, v := range resp.Embeddings {
		if len(v) != Dimensions {
			return nil, fmt.Errorf("ollama embed: model %s gives %d-dimensional vectors, the catalog stores %d (use %s): %w",
				o.model, len(v), Dimensions, DefaultModel, ErrDimensions)
		}
		// Ollama normalises already; doing it here keeps the promise
		// whatever the server version.
		normalize(v)
	}
	return resp.Embeddings, nil
}

// explain turns a client error into one an operator can act on.
func (o *Ollama) explain(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		switch {
		case se.StatusCode == http.StatusNotFound && strings.Contains(se.ErrorMessage, "model"):
			return fmt.Errorf("ollama embed: %w", &ModelNotFoundError{Model: o.model})
		case se.StatusCode == http.StatusNotFound:
			return fmt.Errorf("ollama embed: %s has no /api/embed (Ollama 0.3.4 or newer is needed): %w", o.host, err)
		default:
			return fmt.Errorf("ollama embed: status %d: %w", se.StatusCode, err)
		}
	}
	// Transport errors already name the URL (without its password).
	return fmt.Errorf("ollama embed: %w", err)
}

// Check embeds a probe to prove that the server answers, has the model and
// that the model gives vectors the catalog can store. The service runs it at
// start and refuses a model of the wrong width.
func (o *Ollama) Check(ctx context.Context) error {
	if _, err := o.Embed(ctx, Query, []string{"a person smiling at the camera"}); err != nil {
		return fmt.Errorf("ollama check: %w", err)
	}
	return nil
}
