package brollclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// transport is the HttpRequestDoer under Broll: it adds the key and the
// user agent, gives each purchase and key creation an Idempotency-Key once,
// and retries what is safe to retry.
type transport struct {
	http       *http.Client
	stream     *http.Client // http without its Timeout, for downloads
	base       *url.URL
	key        string
	userAgent  string
	maxRetries int
	minBackoff time.Duration
	maxBackoff time.Duration
}

// maxRetryAfter bounds how long a Retry-After may hold a call; a longer
// one is returned to the caller as the error, with its RetryAfter.
const maxRetryAfter = time.Minute

// idempotentCreate reports the requests the API deduplicates by
// Idempotency-Key (a purchase, a key creation): they get a key if they have
// none, so that a retry of one whose answer was lost is replayed, not run
// again.
func idempotentCreate(r *http.Request) bool {
	return r.Method == http.MethodPost &&
		(strings.HasSuffix(r.URL.Path, "/api/v1/broll/purchase") || strings.HasSuffix(r.URL.Path, "/api/v1/keys"))
}

// Do sends req, retrying 429 and 503 answers, a 409
// idempotency_key_in_use, and network errors of requests that are safe to
// send twice (GET, HEAD, PUT, DELETE, OPTIONS, or any request carrying an
// Idempotency-Key), at most maxRetries times.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	return t.do(t.http, req)
}

// do is Do over hc.
func (t *transport) do(hc *http.Client, req *http.Request) (*http.Response, error) {
	if req.URL.Host == t.base.Host {
		req.Header.Set("Authorization", "Bearer "+t.key)
	}
	req.Header.Set("User-Agent", t.userAgent)
	if idempotentCreate(req) && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", uuid.NewString())
	}
	replayable := req.Header.Get("Idempotency-Key") != ""
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		replayable = true
	}
	for attempt := 0; ; attempt++ {
		try := req
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			try = req.Clone(req.Context())
			try.Body = body
		}
		resp, err := hc.Do(try)
		last := attempt >= t.maxRetries || (req.Body != nil && req.GetBody == nil)
		if err != nil {
			if last || !replayable || req.Context().Err() != nil {
				return nil, err
			}
			if werr := t.wait(req.Context(), attempt, 0); werr != nil {
				return nil, err
			}
			continue
		}
		retry, resp := t.shouldRetry(resp, replayable)
		if !retry || last {
			return resp, nil
		}
		ra := retryAfter(resp.Header)
		if ra > maxRetryAfter {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if err := t.wait(req.Context(), attempt, ra); err != nil {
			return nil, err
		}
	}
}

// shouldRetry says whether resp is an answer to retry. A 409 is retried only
// when its body says idempotency_key_in_use (the first request with the key
// is still running); the body it had to read is put back.
func (t *transport) shouldRetry(resp *http.Response, replayable bool) (bool, *http.Response) {
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, resp // refused before it ran
	case resp.StatusCode == http.StatusServiceUnavailable:
		return replayable, resp
	case resp.StatusCode == http.StatusConflict && replayable:
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var p struct {
			Code string `json:"code"`
		}
		return err == nil && json.Unmarshal(body, &p) == nil && p.Code == CodeIdempotencyKeyInUse, resp
	}
	return false, resp
}

// wait sleeps before retry number attempt+1: the server's Retry-After when
// it sent one, else exponential backoff (minBackoff doubling up to
// maxBackoff) with its upper half random, so that many clients refused at once do not
// come back at once.
func (t *transport) wait(ctx context.Context, attempt int, retryAfter time.Duration) error {
	d := retryAfter
	if d == 0 {
		ceil := t.minBackoff << min(attempt, 16)
		if ceil > t.maxBackoff || ceil <= 0 {
			ceil = t.maxBackoff
		}
		d = ceil/2 + rand.N(ceil/2+1)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
