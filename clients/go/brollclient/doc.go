// Package brollclient is the Go client of the B-roll licensing API,
// generated from api/openapi.json by oapi-codegen (`make clients`; never
// edit client.gen.go by hand). NewClientWithResponses with
// WithRequestEditorFn adding the bearer key is the usual start.
package brollclient
