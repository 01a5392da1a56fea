package brollclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// Version is this client's version, sent in its User-Agent.
const Version = "1.0.0"

// Options configure a Broll once: the key, where the API is, and how hard
// to try.
type Options struct {
	// APIKey is the bearer key (dsk_...). Required.
	APIKey string
	// BaseURL is the API's origin, e.g. https://broll.example.com. Required.
	BaseURL string
	// Timeout bounds each attempt, answer body included, except Download's
	// (a large file takes what it takes; bound it with the context).
	// Default 60s.
	Timeout time.Duration
	// MaxRetries is how many times a call is retried after a 429, a 503, a
	// 409 idempotency_key_in_use or a network error (only where sending it
	// again cannot do it twice). Default 3; NoRetries for none.
	MaxRetries int
	// UserAgent is put before this client's own, e.g. "acme-app/2.1".
	UserAgent string
	// HTTPClient carries the requests (its Timeout is replaced by Timeout).
	// Default: a new http.Client over http.DefaultTransport.
	HTTPClient *http.Client
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries when the server sends no Retry-After. Default 500ms and 8s.
	MinBackoff, MaxBackoff time.Duration
}

// NoRetries as Options.MaxRetries turns retries off.
const NoRetries = -1

// Broll is the client most programs want: typed calls that return the
// answer or an *Error, retries with backoff, an Idempotency-Key per purchase
// and key creation, and iterators over the paged lists. API is the
// generated client underneath, for every other route; it shares the key,
// the retries and the user agent.
type Broll struct {
	API *ClientWithResponses
	t   *transport
}

// New returns a Broll for opts.
func New(opts Options) (*Broll, error) {
	if opts.APIKey == "" {
		return nil, errors.New("brollclient: Options.APIKey is required")
	}
	base, err := url.Parse(strings.TrimSuffix(opts.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("brollclient: Options.BaseURL %q is not an absolute URL", opts.BaseURL)
	}
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	hc.Timeout = opts.Timeout
	if hc.Timeout == 0 {
		hc.Timeout = 60 * time.Second
	}
	stream := *hc
	stream.Timeout = 0
	t := &transport{http: hc, stream: &stream, base: base, key: opts.APIKey, maxRetries: opts.MaxRetries,
		minBackoff: opts.MinBackoff, maxBackoff: opts.MaxBackoff,
		userAgent: strings.TrimSpace(opts.UserAgent + " brollclient-go/" + Version)}
	switch {
	case t.maxRetries == 0:
		t.maxRetries = 3
	case t.maxRetries < 0:
		t.maxRetries = 0
	}
	if t.minBackoff <= 0 {
		t.minBackoff = 500 * time.Millisecond
	}
	if t.maxBackoff < t.minBackoff {
		t.maxBackoff = max(8*time.Second, t.minBackoff)
	}
	api, err := NewClientWithResponses(base.String(), WithHTTPClient(t))
	if err != nil {
		return nil, fmt.Errorf("brollclient: %w", err)
	}
	return &Broll{API: api, t: t}, nil
}

// WithIdempotencyKey sets the Idempotency-Key of a purchase or key creation to
// key (1-255 printable ASCII), e.g. your own order id, so that retries of
// your own (after a crash, from another process) are deduplicated too.
// Without it Broll makes one per call and reuses it on that call's retries.
func WithIdempotencyKey(key string) RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// answer returns v, or the *Error that resp carries when v is nil (the
// status was not the one the call expects).
func answer[T any](v *T, resp *http.Response, body []byte) (*T, error) {
	if v != nil {
		return v, nil
	}
	return nil, errorFrom(resp, body)
}

// Search lists clips (GET /api/v1/broll); see Videos to walk every page.
func (b *Broll) Search(ctx context.Context, params *ListVideosParams) (*VideoList, error) {
	r, err := b.API.ListVideosWithResponse(ctx, params)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// Video returns one clip, with a fresh download_url when the key owns it.
func (b *Broll) Video(ctx context.Context, id openapi_types.UUID) (*Video, error) {
	r, err := b.API.GetVideoWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// Purchase buys clips (all or nothing). It is sent with an Idempotency-Key
// (WithIdempotencyKey, or one made for this call), so that however many times
// it is retried the clips are charged once.
func (b *Broll) Purchase(ctx context.Context, req PurchaseRequest, editors ...RequestEditorFn) (*PurchaseResult, error) {
	r, err := b.API.PurchaseVideosWithResponse(ctx, nil, req, editors...)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// Balance returns the account's balance and this key's spending.
func (b *Broll) Balance(ctx context.Context) (*Balance, error) {
	r, err := b.API.GetBalanceWithResponse(ctx)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// CreateKey makes a customer key (root keys only), with an Idempotency-Key
// as Purchase has. The secret is in the answer's ApiKey, shown once.
func (b *Broll) CreateKey(ctx context.Context, req KeyCreate, editors ...RequestEditorFn) (*KeyCreated, error) {
	r, err := b.API.CreateCustomerKeyWithResponse(ctx, nil, req, editors...)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON201, r.HTTPResponse, r.Body)
}

// CreateCollection makes a collection, a shortlist of clips kept for the
// calling key, to add clips to (AddToCollection) and buy whole later
// (Purchase with CollectionId). Each call makes another one.
func (b *Broll) CreateCollection(ctx context.Context, req CollectionCreate) (*Collection, error) {
	r, err := b.API.CreateCollectionWithResponse(ctx, req)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON201, r.HTTPResponse, r.Body)
}

// AddToCollection adds 1 to 50 clips to a collection of the calling key,
// after the clips it holds, in the order given. A clip already there stays
// where it is, so the call is safe to repeat.
func (b *Broll) AddToCollection(ctx context.Context, id openapi_types.UUID, videoIDs []openapi_types.UUID) (*Collection, error) {
	r, err := b.API.AddCollectionItemsWithResponse(ctx, id, CollectionItemsAdd{VideoIds: videoIDs})
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// Collection returns a collection with a page of its clips, in the order
// added; see CollectionItems to walk every clip.
func (b *Broll) Collection(ctx context.Context, id openapi_types.UUID, params *GetCollectionParams) (*CollectionWithItems, error) {
	r, err := b.API.GetCollectionWithResponse(ctx, id, params)
	if err != nil {
		return nil, err
	}
	return answer(r.JSON200, r.HTTPResponse, r.Body)
}

// Download writes the file behind a purchase's download_url (a signed link
// that needs no key) to w and returns the bytes written. A failed answer
// is retried as any GET; a copy that fails halfway is not (w has part of
// the file): call Video or ListPurchases for a fresh link and start over.
func (b *Broll) Download(ctx context.Context, downloadURL string, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, downloadURL, nil)
	if err != nil {
		return 0, fmt.Errorf("brollclient: download: %w", err)
	}
	resp, err := b.t.do(b.t.stream, req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return 0, errorFrom(resp, body)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("brollclient: download: %w", err)
	}
	return n, nil
}

// Ptr returns a pointer to v, for the optional fields of params and
// requests: &brollclient.ListVideosParams{Limit: brollclient.Ptr(5)}.
func Ptr[T any](v T) *T { return &v }
