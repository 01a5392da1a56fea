package api

import (
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/catalog/media"
	"broll/internal/apperr"
)

// uploadsPath is where ops keys ask for uploads and, with the local store,
// send the bytes.
const uploadsPath = "/api/ops/v1/uploads"

type uploadJSON struct {
	UploadID  uuid.UUID         `json:"upload_id"`
	URL       string            `json:"url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	Size      int64             `json:"size"`
	ExpiresAt time.Time         `json:"expires_at"`
}

// createUpload answers where and how to PUT one file: a presigned PUT of
// the bucket (s3), whose signature binds size and type, or this API's own
// PUT (local), which checks them as it streams.
func (s *uploadsAPI) createUpload(c *fiber.Ctx) error {
	var req media.UploadRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	up, err := s.uploads.Create(c.UserContext(), principal(c).KeyID, req, s.uploadMaxBytes, s.uploadTTL)
	if err != nil {
		return err
	}
	out := uploadJSON{UploadID: up.ID, URL: up.URL, Method: fiber.MethodPut, Headers: up.Headers, Size: up.Size, ExpiresAt: up.ExpiresAt}
	if out.URL == "" {
		out.URL = s.baseURL + uploadsPath + "/" + up.ID.String()
		out.Headers = map[string]string{
			fiber.HeaderContentType:   req.ContentType,
			fiber.HeaderContentLength: strconv.FormatInt(up.Size, 10),
		}
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

// receiveUpload is the local store's PUT: the body streams to disk, never
// whole in memory, and must have the size and type the upload was asked
// with. Only the key that asked for the upload writes it, once.
func (s *uploadsAPI) receiveUpload(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.InvalidField("id", "upload id %q is not a UUID", apperr.Clip(c.Params("id")))
	}
	if _, ok := s.media.(media.Linker); ok {
		return apperr.New(apperr.MethodNotAllowed, "uploads go to the presigned url POST %s returned", uploadsPath)
	}
	body := c.Context().RequestBodyStream()
	if body == nil {
		body = strings.NewReader(string(c.Body()))
	}
	body = &idleBody{r: body, conn: c.Context().Conn(), idle: s.bodyIdle}
	if err := s.uploads.Receive(c.UserContext(), principal(c).KeyID, id, c.Get(fiber.HeaderContentType), body); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// boundBodies keeps the one streamed route's body streamed and reads every
// other body into memory up to limit, as fiber's BodyLimit did before
// request bodies were streamed: a body over limit is 413, however it is
// sent (Content-Length or chunked).
func boundBodies(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		if len(req.Header.Peek(bodyOverLimit)) > 0 {
			return bodyTooLarge(c, limit)
		}
		if refusal := req.Header.Peek(bodyUnauthenticated); len(refusal) > 0 {
			lingerClose(c, limit)
			if err := refusedBody(string(refusal)); err != nil {
				return err
			}
			return c.Next()
		}
		if !req.IsBodyStream() {
			return c.Next()
		}
		if isUploadPut(c.Method(), c.Path()) {
			// An encoded body would be inflated in memory by decodeBodies.
			if enc := contentEncoding(c); enc != "" && !strings.EqualFold(enc, "identity") {
				c.Context().SetConnectionClose()
				return apperr.New(apperr.UnsupportedMedia, "send the upload's bytes as they are, without Content-Encoding")
			}
			// A refusal (authentication, rate limit, the upload's own
			// checks) leaves the body unread: the connection cannot carry
			// another request.
			err := c.Next()
			if err != nil || c.Response().StatusCode() >= 400 {
				c.Context().SetConnectionClose()
			}
			return err
		}
		if cl := req.Header.ContentLength(); cl > limit {
			return bodyTooLarge(c, limit)
		}
		b, err := io.ReadAll(io.LimitReader(c.Context().RequestBodyStream(), int64(limit)+1))
		if err != nil {
			return apperr.New(apperr.Invalid, "the request body could not be read")
		}
		if len(b) > limit {
			return bodyTooLarge(c, limit)
		}
		req.SetBodyRaw(b)
		return c.Next()
	}
}

// lingerClose makes a request whose body is left unread close its
// connection the way a lingering close does: before the answer is
// written, up to limit bytes of what the client is still sending are read
// from the connection and dropped while they keep coming (lingerIdle
// between two reads, lingerFor in all), and the connection is closed after
// the answer. Closing at once, with the body's bytes still arriving, makes
// the kernel reset the connection, and a client still writing its body
// then sees the reset instead of the answer (a 401 or 413 lost). A client
// that stops sending gets its answer after lingerIdle; none holds the
// request past lingerFor, and what is read is never kept.
//
// The drain runs in the handler, not in a hijack handler: fasthttp closes
// a connection whose answer says Connection: close as soon as the answer
// is written, before any hijack handler would run.
func lingerClose(c *fiber.Ctx, limit int) {
	ctx := c.Context()
	ctx.SetConnectionClose()
	conn := ctx.Conn()
	if conn == nil {
		return
	}
	end := time.Now().Add(lingerFor)
	buf := make([]byte, 32<<10)
	for left := limit; left > 0; {
		deadline := time.Now().Add(lingerIdle)
		if deadline.After(end) {
			deadline = end
		}
		_ = conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf[:min(len(buf), left)])
		left -= n
		if err != nil {
			break
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
}

// lingerIdle is how long a refused request waits for more of its body;
// lingerFor bounds the whole drain.
const (
	lingerIdle = 250 * time.Millisecond
	lingerFor  = 10 * time.Second
)

// bodyOverLimit marks a request whose announced body is over the limit
// (screenBodies).
const bodyOverLimit = "X-Broll-Body-Over-Limit"

func isUploadPut(method, path string) bool {
	return method == fiber.MethodPut && strings.HasPrefix(path, uploadsPath+"/")
}

// bodyTooLarge also closes the connection: the rest of the body is never
// read, so the connection cannot carry another request.
func bodyTooLarge(c *fiber.Ctx, limit int) error {
	lingerClose(c, limit)
	return apperr.New(apperr.PayloadTooLarge, "the request body is larger than %d bytes", limit)
}

// idleBody reads an upload's streamed body with the connection's read
// deadline moved to idle from now before every read. fasthttp sets one
// deadline (the server's ReadTimeout) when a request starts, for its
// headers and whatever body it reads itself; a large file over a slow link
// would run past it however steadily it arrives. So the body is bounded by
// the time between two of its reads instead: a client that stops sending
// is cut after idle, one that keeps sending is never. A read that fails
// (deadline passed, connection broken) is the client's doing: 400, and
// boundBodies closes the connection.
type idleBody struct {
	r    io.Reader
	conn net.Conn
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.conn != nil {
		_ = b.conn.SetReadDeadline(time.Now().Add(b.idle))
	}
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, apperr.New(apperr.Invalid,
			"the body stopped arriving (no byte for %s, or the connection broke); send the upload again", b.idle)
	}
	return n, err
}
