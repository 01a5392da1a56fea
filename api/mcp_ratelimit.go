package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"broll/internal/apperr"
)

// mcpCodeRateLimited is the JSON-RPC error code of a refused request other
// than a tool call (initialize, tools/list, ...); data.code says
// rate_limited. It is in the range JSON-RPC leaves to servers and not one
// MCP assigns.
const mcpCodeRateLimited = -32000

// rateLimitInBand lets an MCP client see why the limiter refused a request
// and for how long. The official Go SDK client treats an HTTP 429 as a
// transient transport failure without reading its body or Retry-After (it
// reports only "rejected by transport: Too Many Requests"), so neither the
// model nor its host learns the wait. A refused JSON-RPC request is therefore answered in band with
// HTTP 200: a tools/call with the tool's error result (isError, code
// rate_limited, retryable, retry_after_seconds), any other request with a
// JSON-RPC error carrying the same object as data. Retry-After and the
// X-RateLimit headers authenticate set stay on the response, and the call
// still counts as refused (broll_rate_limited_total). A notification has
// no response to carry the answer and keeps the HTTP 429 problem, as does
// a body that is not a JSON-RPC request.
func (ep *mcpEndpoint) rateLimitInBand(c *fiber.Ctx) error {
	err := c.Next()
	var ae *apperr.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != apperr.RateLimited {
		return err
	}
	msg, derr := jsonrpc.DecodeMessage(c.Request().Body())
	req, ok := msg.(*jsonrpc.Request)
	if derr != nil || !ok || !req.IsCall() {
		return err
	}
	resp := &jsonrpc.Response{ID: req.ID}
	if req.Method == "tools/call" {
		var params struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(req.Params, &params) // the name only labels the result
		if resp.Result, derr = json.Marshal(ep.tools.toolError(c, params.Name, ae)); derr != nil {
			return err
		}
	} else {
		resp.Error = &jsonrpc.Error{Code: mcpCodeRateLimited, Message: string(ae.Code) + ": " + ae.Message,
			Data: toolErrorBody(c, ae, http.StatusTooManyRequests)}
	}
	body, derr := jsonrpc.EncodeMessage(resp)
	if derr != nil {
		return err
	}
	c.Status(fiber.StatusOK)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}
