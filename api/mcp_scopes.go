package api

import (
	"context"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/tenancy"
)

// toolSet is the MCP server being built with the scope each of its tools
// needs, so that tools/list can show a key only what it may call.
type toolSet struct {
	mcp    *mcp.Server
	scopes map[string]tenancy.Scope
}

// listPermitted filters tools/list to the tools the calling key's scopes
// allow: a key for search only is not offered purchase_videos, and an
// assistant does not plan calls that would be refused. Calling a tool
// outside the scopes is still refused by the tool itself (addTool); this
// only decides what is shown. The SDK builds a fresh result per request,
// so its slice may be replaced; the tools themselves are shared and left
// untouched.
func (ts *toolSet) listPermitted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok {
			return res, err
		}
		c, ok := requestFrom(ctx)
		if !ok {
			// Fail closed: without the HTTP request there is no principal.
			return nil, errors.New("tools/list outside an authenticated request")
		}
		p := principal(c)
		list.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool {
			scope, known := ts.scopes[t.Name]
			return !known || !p.Has(scope)
		})
		return list, nil
	}
}
