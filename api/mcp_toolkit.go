package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/money"
	"broll/tenancy"
)

// toolFunc is the logic of one tool: typed arguments in, the REST body and a
// one-line summary for the assistant out. It runs only for callers holding
// the tool's scope.
type toolFunc[In, Out any] func(ctx context.Context, c *fiber.Ctx, in In) (Out, string, error)

// addTool registers a tool whose arguments decode into In and whose
// structuredContent is Out, the body the same REST call returns.
//
// The SDK's typed mcp.AddTool is not used on purpose: it reports argument
// errors as unstructured text and overwrites the structuredContent of an
// error result with the zero output. Here argument errors and failures come
// back as the same structured {code, message, retryable, field?} result,
// decided by the same domain validation REST runs (the input schema
// documents those rules; it does not replace them).
func addTool[In, Out any](s *mcpTools, srv *toolSet, t *mcp.Tool, scope tenancy.Scope,
	refine func(*jsonschema.Schema), fn toolFunc[In, Out]) {
	srv.scopes[t.Name] = scope
	in := schemaFor[In]()
	for _, p := range in.Properties {
		dropNull(p)
	}
	if refine != nil {
		refine(in)
	}
	t.InputSchema = in
	// TypeScript-SDK clients check structuredContent against outputSchema
	// even on error results; declaring the error shape as an alternative
	// keeps them from replacing our error with a validation failure.
	t.OutputSchema = &jsonschema.Schema{Type: "object", AnyOf: []*jsonschema.Schema{schemaFor[Out](), toolErrorSchema()}}

	call := func(ctx context.Context, c *fiber.Ctx, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !principal(c).Has(scope) {
			return nil, apperr.New(apperr.InsufficientScope, "this tool needs the %s scope", scope).
				With("required_scope", string(scope))
		}
		var args In
		if err := decodeArgs(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		out, summary, err := fn(ctx, c, args)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encode result: %w", t.Name, err)
		}
		// The JSON also goes into a text block: clients that only read
		// content (as the spec allows) still get ids and links.
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(raw)}},
			StructuredContent: json.RawMessage(raw),
		}, nil
	}
	srv.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, ok := requestFrom(ctx)
		if !ok {
			// Fail closed: without the HTTP request there is no principal.
			return nil, errors.New("tool call outside an authenticated request")
		}
		start := time.Now()
		ctx, span := s.startTool(ctx, t.Name)
		res, err := call(ctx, c, req)
		endTool(span, err)
		s.metrics.observeTool(t.Name, err, time.Since(start))
		if err != nil {
			return s.toolError(c, t.Name, err), nil
		}
		return res, nil
	})
}

// decodeArgs reads tool arguments as strictly as decodeJSON reads request
// bodies, with the same messages; no arguments at all means all defaults.
func decodeArgs(raw json.RawMessage, dst any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	if err := uniqueNames(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	return nil
}

// toolErrorJSON is the structuredContent of a failed call. Extra fields of
// the application error (required_scope, allowed_values, required and
// available, ...) travel beside these, as they do in problem bodies.
type toolErrorJSON struct {
	Code              string `json:"code" jsonschema:"stable snake_case code, the same as the REST API's: invalid_request, conflicting_search_params, insufficient_scope, forbidden, not_found, not_embedded, insufficient_credits, spend_limit_exceeded, price_changed, internal, unavailable"`
	Message           string `json:"message" jsonschema:"what went wrong and how to fix the call"`
	Retryable         bool   `json:"retryable" jsonschema:"true when the same call may succeed later without changes"`
	Field             string `json:"field,omitempty" jsonschema:"the argument that was rejected"`
	RetryAfterSeconds int    `json:"retry_after_seconds,omitempty" jsonschema:"wait this long before retrying"`
	RequestID         string `json:"request_id,omitempty" jsonschema:"quote it when reporting a problem"`
}

func toolErrorSchema() *jsonschema.Schema {
	s := schemaFor[toolErrorJSON]()
	s.Description = "returned with isError: true when the call fails"
	s.AdditionalProperties = nil
	return s
}

// toolError is the MCP counterpart of errorHandler: the same classifier,
// with retryable derived from its HTTP status. Errors of unknown origin are
// logged and shown only as internal, exactly as REST shows them.
func (s *mcpTools) toolError(c *fiber.Ctx, tool string, err error) *mcp.CallToolResult {
	out := classify.Error(err)
	ae := out.Err
	if !out.Known {
		s.logger.Error("mcp tool failed", "request_id", requestID(c), "tool", tool, "error", err.Error())
	}
	if ae.Code == apperr.Unavailable {
		s.logger.Warn("unavailable", "request_id", requestID(c), "tool", tool, "error", err.Error())
	}
	raw := toolErrorBody(c, ae, out.Status)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(ae.Code) + ": " + ae.Message}, &mcp.TextContent{Text: string(raw)}},
		StructuredContent: raw,
	}
}

// toolErrorBody is the toolErrorJSON of ae, with its extra fields, as JSON.
func toolErrorBody(c *fiber.Ctx, ae *apperr.Error, status int) json.RawMessage {
	body := make(map[string]any, len(ae.Fields)+5)
	for k, v := range ae.Fields {
		body[k] = v
	}
	body["code"], body["message"] = string(ae.Code), ae.Message
	// A conflict that passes with time (not_embedded) says so with
	// retry_after_seconds, as a 429 does.
	_, later := ae.Fields["retry_after_seconds"]
	body["retryable"] = status == http.StatusTooManyRequests || status >= http.StatusInternalServerError || later
	body["request_id"] = requestID(c)
	if ae.Field != "" {
		body["field"] = ae.Field
	}
	raw, _ := json.Marshal(body) // a map of JSON-safe values
	return raw
}

// schemaFor infers a JSON schema from the REST types, with the wire forms
// of the types that marshal themselves. A failure is a programming error
// found by any test that builds the app.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[uuid.UUID]():   {Type: "string", Format: "uuid"},
		reflect.TypeFor[money.Cents](): {Type: "number", Description: "US dollars"},
		reflect.TypeFor[json.Number](): {Type: "number"},
		reflect.TypeFor[time.Time]():   {Type: "string", Format: "date-time"},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcp schema: %v", err))
	}
	return s
}

// dropNull removes "null" from an argument's types: an optional argument is
// one to leave out, and a single type is what assistants fill in best.
func dropNull(s *jsonschema.Schema) {
	if i := slices.Index(s.Types, "null"); i >= 0 {
		types := slices.Delete(slices.Clone(s.Types), i, i+1)
		s.Types = nil
		if len(types) == 1 {
			s.Type = types[0]
		} else {
			s.Types = types
		}
	}
}

// schemaEnum lists allowed values in a schema.
func schemaEnum(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
