package api

import (
	"encoding/json"

	"broll/clients/go/brollclient"
)

// The tests read answers as the contract writes them: into the types
// generated from api/openapi.json (broll/clients/go/brollclient, the Go
// client's module), never into structs written beside the handlers. decode
// refuses a member the type does not declare and one it requires that is
// missing, so a handler drifting from the document fails the test that
// reads it, and so does a document drifting from the handlers. Only what
// the document does not describe is written here: MCP's additions to a
// tool error and its JSON-RPC envelope. Money is in dollars, as on the wire.

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
