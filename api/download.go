package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/catalog/media"
	"broll/internal/apperr"
)

// download serves the full-quality file behind a signed link. No bearer key:
// the signature is the proof. Fetches are limited per purchase and per
// client address (checked once the signature holds, before the database is
// asked). Single byte ranges are honoured so players and download managers
// can resume; every GET is logged for the audit, with the bytes that
// actually went out once the stream ends. HEAD fetches nothing and is not
// logged.
func (s *downloadsAPI) download(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id, err := s.billing.VerifyLink(c.Params("purchase_id"), c.Query("exp"), c.Query("kv"), c.Query("sig"))
	if err != nil {
		return err
	}
	addr := s.clientAddr(c)
	if err := s.downloads.Allow(ctx, id, addr); err != nil {
		return err
	}
	d, err := s.billing.Authorize(ctx, id)
	if err != nil {
		return err
	}
	if linker, ok := s.media.(media.Linker); ok {
		return s.redirectDownload(c, linker, d, addr)
	}
	f, err := s.media.Open(ctx, d.MediaKey)
	if err != nil && s.unstamp(c, &d, err) {
		f, err = s.media.Open(ctx, d.MediaKey)
	}
	if err != nil {
		return fmt.Errorf("open media %s: %w", d.MediaKey, err)
	}
	size := f.Size()
	start, end, partial, err := parseRange(c.Get(fiber.HeaderRange), size)
	if err != nil {
		f.Close()
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes */%d", size))
		return err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	length := end - start + 1
	status := fiber.StatusOK
	if partial {
		status = fiber.StatusPartialContent
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end, size))
	}
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderContentType, d.ContentType)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s%s"`, d.VideoID, extOf(d.MediaKey)))
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Status(status)
	if c.Method() == fiber.MethodHead {
		// Headers only: fasthttp sends no body for HEAD.
		f.Close()
		c.Response().Header.SetContentLength(int(length))
		return nil
	}

	// A failed log write does not fail the download.
	ev := billing.DownloadEvent{Download: d, ClientAddr: addr, UserAgent: c.Get(fiber.HeaderUserAgent), BytesSent: length, Status: status}
	logCtx := context.WithoutCancel(ctx)
	logID, err := s.billing.LogDownload(logCtx, ev)
	if err != nil {
		s.logger.Error("download log failed", "request_id", requestID(c), "purchase_id", d.PurchaseID.String(), "error", err.Error())
	}
	body := &countingReader{r: io.LimitReader(f, length), file: f, conn: c.Context().Conn(), idle: s.bodyIdle, done: func(n int64) {
		if logID == 0 {
			return
		}
		if err := s.billing.FinishDownload(logCtx, logID, n); err != nil {
			s.logger.Error("download log failed", "purchase_id", d.PurchaseID.String(), "error", err.Error())
		}
	}}
	return c.SendStream(body, int(length))
}

// redirectDownload hands a checked download to the media store: the fetch
// is logged (with the file's size as what was handed over, since the bytes
// go from the store to the client) and answered with a 302 to a presigned
// GET that works for seconds. HEAD is answered the same way, unlogged.
func (s *downloadsAPI) redirectDownload(c *fiber.Ctx, linker media.Linker, d billing.Download, addr string) error {
	ctx := c.UserContext()
	size, err := s.media.Stat(ctx, d.MediaKey)
	if err != nil && s.unstamp(c, &d, err) {
		size, err = s.media.Stat(ctx, d.MediaKey)
	}
	if err != nil {
		return fmt.Errorf("stat media %s: %w", d.MediaKey, err)
	}
	u, err := linker.GetURL(ctx, d.MediaKey, d.ContentType, d.VideoID.String()+extOf(d.MediaKey))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	if c.Method() != fiber.MethodHead {
		ev := billing.DownloadEvent{Download: d, ClientAddr: addr, UserAgent: c.Get(fiber.HeaderUserAgent), BytesSent: size, Status: fiber.StatusFound}
		if _, err := s.billing.LogDownload(context.WithoutCancel(ctx), ev); err != nil {
			s.logger.Error("download log failed", "request_id", requestID(c), "purchase_id", d.PurchaseID.String(), "error", err.Error())
		}
	}
	return c.Redirect(u, fiber.StatusFound)
}

// unstamp turns a download whose licence-stamped copy could not be read
// (err) to the original, asking for the copy again, and reports whether it
// did: a stamped copy failing never fails a download.
func (s *downloadsAPI) unstamp(c *fiber.Ctx, d *billing.Download, err error) bool {
	if d.Original == "" {
		return false
	}
	s.logger.Warn("licence-stamped copy unreadable; serving the original", "request_id", requestID(c),
		"purchase_id", d.PurchaseID.String(), "key", d.MediaKey, "error", err.Error())
	d.MediaKey, d.Original = d.Original, ""
	s.billing.RestampMissing(c.UserContext(), d.PurchaseID)
	return true
}

// countingReader counts the bytes fasthttp takes for the response body and,
// when fasthttp closes it (the body sent, or the client gone), closes the
// file and reports the count. What was read was handed to the connection;
// a client that leaves mid-stream is reported short of the file's length
// (by what the socket buffers held at most).
//
// Each read also moves the connection's write deadline to idle from now:
// fasthttp's WriteTimeout bounds the whole response, which a large file to
// a slow client would pass however steadily it is taken; a client that
// takes nothing for idle is still cut.
type countingReader struct {
	r    io.Reader
	file io.Closer
	n    int64
	done func(n int64)
	conn net.Conn
	idle time.Duration
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.conn != nil && r.idle > 0 {
		_ = r.conn.SetWriteDeadline(time.Now().Add(r.idle))
	}
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

func (r *countingReader) Close() error {
	err := r.file.Close()
	r.done(r.n)
	return err
}

func extOf(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 && !strings.Contains(key[i:], "/") {
		return key[i:]
	}
	return ""
}

// parseRange reads a single "bytes=a-b", "bytes=a-" or "bytes=-n" range.
// Multiple ranges are served whole (allowed by RFC 9110).
func parseRange(h string, size int64) (start, end int64, partial bool, err error) {
	if h == "" || size == 0 || strings.Contains(h, ",") {
		return 0, size - 1, false, nil
	}
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	unsatisfiable := apperr.New(apperr.RangeUnsatisfiable, "range %q cannot be satisfied for a %d-byte file", apperr.Clip(h), size)
	if !ok {
		return 0, size - 1, false, nil
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, false, unsatisfiable
	}
	switch a {
	case "":
		n, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || n <= 0 {
			return 0, 0, false, unsatisfiable
		}
		start = max(size-n, 0)
		end = size - 1
	default:
		var perr error
		if start, perr = strconv.ParseInt(a, 10, 64); perr != nil || start < 0 || start >= size {
			return 0, 0, false, unsatisfiable
		}
		end = size - 1
		if b != "" {
			e, perr := strconv.ParseInt(b, 10, 64)
			if perr != nil || e < start {
				return 0, 0, false, unsatisfiable
			}
			end = min(e, size-1)
		}
	}
	return start, end, true, nil
}

// closingReader lets fasthttp close the file once it has sent the body.
type closingReader struct {
	r io.Reader
	c io.Closer
}

func (r *closingReader) Read(p []byte) (int, error) { return r.r.Read(p) }

func (r *closingReader) Close() error { return r.c.Close() }
