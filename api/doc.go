// Package api is the HTTP adapter: the fiber app, its middleware (request id,
// auth, scopes, rate limit, usage), the REST v1 and legacy handlers, the MCP
// server, problem+json errors, the OpenAPI document and /docs. Handlers stay
// thin: parse, call a domain package, render.
//
// NewNode (node.go) is also the composition root: the one function that
// builds the service graph, called by cmd/broll-api, every test setup and the
// benchmarks. It lives here rather than in a package of its own because the
// tests of package api build their nodes with it, and they could not import
// a package that imports api.
package api
