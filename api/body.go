package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
)

// decodeJSON reads a JSON object body strictly: malformed JSON, unknown
// fields, wrong types and trailing data are all 400 with a precise message.
func decodeJSON(c *fiber.Ctx, dst any) error {
	return decodeBody(c.Body(), dst)
}

// decodeBody is decodeJSON over the bytes alone, so that it can be fuzzed
// without a request around it.
func decodeBody(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.New(apperr.Invalid, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apperr.New(apperr.Invalid, "request body must hold a single JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return apperr.New(apperr.Invalid, "malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return apperr.New(apperr.Invalid, "request body must be a JSON object")
		}
		return apperr.InvalidField(typ.Field, "%s must be of type %s", typ.Field, jsonType(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.New(apperr.Invalid, "malformed JSON: unexpected end of body")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.InvalidField(name, "unknown field %q", name)
	}
	if ae, ok := apperr.As(err); ok {
		return ae
	}
	return apperr.New(apperr.Invalid, "malformed JSON: %s", strings.TrimPrefix(fmt.Sprint(err), "json: "))
}

func jsonType(kind string) string {
	switch kind {
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	case "int", "int64", "int32", "float64", "float32", "uint", "uint64":
		return "number"
	case "bool":
		return "boolean"
	}
	return kind
}
