package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/internal/apperr"
)

// decodeBodies is the one reader every request body goes through, whatever
// surface reads it next (REST, MCP, ops, legacy, the dashboard's forms).
// Identity bodies pass as they are: fiber's BodyLimit already bounded them.
// A gzip body is inflated here, through a reader that stops one byte past
// limit, and replaces the raw bytes; its Content-Encoding is then removed,
// so nothing downstream (fiber's Ctx.Body, the MCP adaptor, form parsing)
// inflates it again, and fiber's own Ctx.Body, which inflates without any
// cap, never sees an encoded body. Any other encoding is 415.
func decodeBodies(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		enc := contentEncoding(c)
		if enc == "" || strings.EqualFold(enc, "identity") {
			return c.Next()
		}
		if !strings.EqualFold(enc, "gzip") && !strings.EqualFold(enc, "x-gzip") {
			return apperr.New(apperr.UnsupportedMedia,
				"Content-Encoding %q is not supported: send the body uncompressed or with Content-Encoding: gzip", apperr.Clip(enc)).
				With("supported_encodings", []string{"gzip", "identity"})
		}
		req := c.Request()
		if raw := req.Body(); len(raw) > 0 {
			body, err := inflate(raw, limit)
			if err != nil {
				return err
			}
			req.SetBodyRaw(body)
		}
		req.Header.Del(fiber.HeaderContentEncoding)
		return c.Next()
	}
}

// contentEncoding is the request's Content-Encoding, every header line of it
// joined: "gzip" twice is a stacked encoding, not gzip.
func contentEncoding(c *fiber.Ctx) string {
	var parts []string
	for k, v := range c.Request().Header.All() {
		if bytes.EqualFold(k, []byte(fiber.HeaderContentEncoding)) { // no string per header of every request
			if t := bytes.TrimSpace(v); len(t) > 0 {
				parts = append(parts, string(t))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// inflate decodes a gzip body, refusing it (413) as soon as it passes limit
// bytes: memory stays bounded by limit whatever the compression ratio. The
// buffer grows by doubling up to limit+1 and never past it (bytes.Buffer
// would double once more to make room for the read that finds the end).
func inflate(raw []byte, limit int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "body is not valid gzip")
	}
	defer zr.Close()
	buf := make([]byte, min(limit+1, 4*len(raw)+512))
	n := 0
	for {
		if n > limit {
			return nil, apperr.New(apperr.PayloadTooLarge, "request body inflates to more than %d bytes", limit).
				With("limit_bytes", limit)
		}
		if n == len(buf) {
			grown := make([]byte, min(2*len(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		m, err := zr.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) && n <= limit {
			return buf[:n], nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, apperr.New(apperr.Invalid, "body is not valid gzip")
		}
	}
}

// decodeJSON reads a JSON object body strictly: malformed JSON, a member
// named twice (also in two cases, see uniqueNames), unknown fields, wrong
// types and trailing data are all 400 with a precise message. It reads the
// raw bytes: decodeBodies has already inflated them.
func decodeJSON(c *fiber.Ctx, dst any) error {
	return decodeBody(c.Request().Body(), dst)
}

// decodeBody is decodeJSON over the bytes alone, so that it can be fuzzed
// without a request around it.
func decodeBody(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.New(apperr.Invalid, "request body must be a JSON object")
	}
	if err := uniqueNames(body); err != nil {
		return err
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
		return apperr.InvalidField(typ.Field, "%s must be of type %s", apperr.Clip(typ.Field), jsonType(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.New(apperr.Invalid, "malformed JSON: unexpected end of body")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.InvalidField(name, "unknown field %q", apperr.Clip(name))
	}
	if ae, ok := apperr.As(err); ok {
		return ae
	}
	return apperr.New(apperr.Invalid, "malformed JSON: %s", apperr.Clip(strings.TrimPrefix(fmt.Sprint(err), "json: ")))
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
