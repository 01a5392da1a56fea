// Package api is the HTTP adapter: the fiber app, its middleware (request id,
// auth, scopes, rate limit, usage), the REST v1 and legacy handlers, the MCP
// server, problem+json errors, the OpenAPI document and /docs. Handlers stay
// thin: parse, call a domain package, render.
//
// It builds no service: NewNode (node.go) takes the services that package
// wiring, the composition root, built, and newSurfaces (handlers.go) hands
// each group of handlers the services it uses, by name.
package api
