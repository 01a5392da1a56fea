package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// legacyProtocol is the protocol version today's assistants speak: it opens
// with initialize, then notifications/initialized.
const legacyProtocol = "2025-06-18"

// serveLoopback serves node 0 on a loopback port, as production serves it, and
// returns its base URL.
func (e *testEnv) serveLoopback(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := e.nodes[0].app
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// bearerTransport adds the API key to every request of an MCP client, as
// `claude mcp add --header "Authorization: Bearer ..."` does.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// toolClient is a go-sdk client session that also checks every result
// against the tool's advertised output schema, as the TypeScript SDK does.
type toolClient struct {
	*mcp.ClientSession
	schemas map[string]*jsonschema.Resolved // by tool, loaded on first use
}

// mcpConnect opens a go-sdk client session to the endpoint with key; an
// empty version means the SDK's newest protocol.
func mcpConnect(t testing.TB, baseURL, key, version string) (*toolClient, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "broll-test", Version: "1.0.0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: baseURL + mcpPath, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{key}, Timeout: 30 * time.Second}}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &toolClient{ClientSession: cs}, nil
}

func mcpMustConnect(t testing.TB, baseURL, key string) *toolClient {
	t.Helper()
	cs, err := mcpConnect(t, baseURL, key, legacyProtocol)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// callTool runs a tool and returns its result, with structuredContent as
// the body of a response for decode and errorOf.
func callTool(t testing.TB, cs *toolClient, tool string, args map[string]any) (*mcp.CallToolResult, response) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", tool, raw, err)
	}
	// A tool the key was not shown (tools/list is filtered by scope) has
	// no schema for it; calling it anyway must fail.
	if schema := cs.outputSchema(t, tool); schema == nil && !res.IsError {
		t.Fatalf("%s: not listed for this key, yet it ran: %s", tool, raw)
	} else if schema != nil {
		if err := schema.Validate(out); err != nil {
			t.Fatalf("%s: structuredContent does not match the output schema (strict clients would reject it): %v\n%s", tool, err, raw)
		}
	}
	body := response{status: 200, raw: raw}
	if res.IsError != (errorOf[toolError](t, body).Code != "") {
		t.Fatalf("%s: isError %v with %s", tool, res.IsError, raw)
	}
	return res, body
}

// outputSchema is the tool's output schema as tools/list shows it to this
// key; nil when the key was not shown the tool.
func (cs *toolClient) outputSchema(t testing.TB, tool string) *jsonschema.Resolved {
	t.Helper()
	if cs.schemas == nil {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs.schemas = map[string]*jsonschema.Resolved{}
		for _, tl := range res.Tools {
			r, err := schemaOf(t, tl.OutputSchema).Resolve(nil)
			if err != nil {
				t.Fatalf("%s: output schema: %v", tl.Name, err)
			}
			cs.schemas[tl.Name] = r
		}
	}
	return cs.schemas[tool]
}

// callToolOK runs a tool that must succeed.
func callToolOK(t testing.TB, cs *toolClient, tool string, args map[string]any) response {
	t.Helper()
	res, out := callTool(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v): error result %s", tool, args, out.raw)
	}
	if len(res.Content) < 1 || resultText(res, 0) == "" {
		t.Fatalf("%s: no text summary", tool)
	}
	return out
}

// callToolErr runs a tool that must fail with code, and checks the error shape.
func callToolErr(t testing.TB, cs *toolClient, tool string, args map[string]any, code string) toolError {
	t.Helper()
	res, body := callTool(t, cs, tool, args)
	out := errorOf[toolError](t, body)
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want %s", tool, args, code)
	}
	if string(out.Code) != code {
		t.Fatalf("%s(%v): code %v, want %s: %s", tool, args, out.Code, code, body.raw)
	}
	if out.Retryable == nil || out.Message == "" {
		t.Fatalf("%s: error lacks message or retryable: %s", tool, body.raw)
	}
	if !strings.HasPrefix(resultText(res, 0), code+": ") {
		t.Fatalf("%s: text %q does not start with the code", tool, resultText(res, 0))
	}
	return out
}

// schemaOf reads a tool's input or output schema as the SDK hands it over.
func schemaOf(t testing.TB, v any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return &s
}

func resultText(res *mcp.CallToolResult, i int) string {
	if i >= len(res.Content) {
		return ""
	}
	tc, _ := res.Content[i].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// mcpPost sends one JSON-RPC message (or any body) straight over HTTP.
// The answer is a response, as the REST helpers give.
func mcpPost(t *testing.T, baseURL, key string, header map[string]string, body string) response {
	t.Helper()
	return mcpSend(t, "POST", baseURL, key, header, body)
}

func mcpSend(t *testing.T, method, baseURL, key string, header map[string]string, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, baseURL+mcpPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Transport: bearerTransport{key}, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && !json.Valid(raw) {
		t.Fatalf("%s %s: body %q is not JSON", method, mcpPath, raw)
	}
	if res.StatusCode >= 400 && !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		checkProblem(t, method+" "+mcpPath, out)
	}
	return out
}

const toolsCallBalance = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_balance","arguments":{}}}`

func mcpCall(tool string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
}
