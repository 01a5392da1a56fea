package api

import (
	"encoding/json"

	"broll/clients/go/brollclient"
)

// The response bodies the tests read, written from the contract (API.md and
// api/openapi.json), not from the handlers' types: a field renamed on the
// server is an unknown field here, and decode fails the test. Members the
// server leaves out when empty carry omitempty here too, so that decode's
// round trip (the type gives back the body) holds. Money is in dollars, as
// on the wire.

// deref is what p points at, or the zero value: the generated types hold
// optional members as pointers.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// toolError is the structuredContent of a failed MCP tool call: a
// problem's members (brollclient.Problem, extensions included), with
// message and retryable beside them, which MCP adds and the OpenAPI
// document, describing REST, does not hold.
type toolError struct {
	brollclient.Problem
	Message   string
	Retryable *bool
}

// UnmarshalJSON reads the problem with its own decoder (which keeps the
// members it does not declare), then the two MCP members.
func (e *toolError) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &e.Problem); err != nil {
		return err
	}
	var mcp struct {
		Message   string `json:"message"`
		Retryable *bool  `json:"retryable"`
	}
	if err := json.Unmarshal(b, &mcp); err != nil {
		return err
	}
	e.Message, e.Retryable = mcp.Message, mcp.Retryable
	return nil
}

// videoTitles are the titles of a list's videos, in order.
func videoTitles(l brollclient.VideoList) []string {
	out := make([]string, len(l.Videos))
	for i, v := range l.Videos {
		out[i] = v.Title
	}
	return out
}

// rpcResponse is a JSON-RPC answer of the MCP endpoint, read below the SDK.
type rpcResponse struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Result  *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError,omitempty"`
	} `json:"result,omitempty"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	} `json:"error,omitempty"`
}

// webhookBody is the Webhook object; Secret is shown on creation only.
type webhookBody struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	Events         []string `json:"events"`
	Enabled        bool     `json:"enabled"`
	FailingSince   *string  `json:"failing_since"`
	DisabledAt     *string  `json:"disabled_at"`
	DisabledReason *string  `json:"disabled_reason"`
	CreatedAt      string   `json:"created_at"`
	Secret         string   `json:"secret,omitempty"`
}

type webhookList struct {
	Webhooks []webhookBody `json:"webhooks"`
}

type webhookPing struct {
	EventID string `json:"event_id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
}

type webhookRotated struct {
	ID                      string `json:"id"`
	Secret                  string `json:"secret"`
	PreviousSecretsExpireAt string `json:"previous_secrets_expire_at"`
	ActiveSecrets           int    `json:"active_secrets"`
}

type webhookDeliveries struct {
	Deliveries []webhookDelivery `json:"deliveries"`
}

// webhookDelivery is one row of GET /api/v1/webhooks/{id}/deliveries.
type webhookDelivery struct {
	EventID     string  `json:"event_id"`
	EventType   string  `json:"event_type"`
	AttemptedAt string  `json:"attempted_at"`
	StatusCode  *int    `json:"status_code"`
	DurationMS  int     `json:"duration_ms"`
	Error       *string `json:"error"`
	State       string  `json:"state"`
	Attempts    int     `json:"attempts"`
	NextRetryAt *string `json:"next_retry_at"`
}

// importResult is POST /api/ops/v1/videos: the counts of an import.
type importResult struct {
	Created int    `json:"created"`
	Updated int    `json:"updated"`
	Queued  int    `json:"queued"`
	Warning string `json:"warning,omitempty"`
}

// retired is the answer to retiring a clip.
type retired struct {
	ID             string `json:"id"`
	RetiredAt      string `json:"retired_at"`
	AlreadyRetired bool   `json:"already_retired"`
}

// uploadBody is the answer to starting an upload.
type uploadBody struct {
	UploadID  string            `json:"upload_id"`
	URL       string            `json:"url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	Size      int64             `json:"size"`
	ExpiresAt string            `json:"expires_at"`
}
