package api

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"broll/billing"
	"broll/internal/apperr"
)

// download serves the full-quality file behind a signed link. No bearer key:
// the signature is the proof. Single byte ranges are honoured so players and
// download managers can resume; every fetch is logged for the audit.
func (s *server) download(c *fiber.Ctx) error {
	ctx := c.UserContext()
	d, err := s.billing.Verify(ctx, c.Params("purchase_id"), c.Query("exp"), c.Query("kv"), c.Query("sig"))
	if err != nil {
		return err
	}
	f, err := s.media.Open(ctx, d.MediaKey)
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

	// The log write must not fail the download, nor wait for it.
	ev := billing.DownloadEvent{Download: d, ClientAddr: s.clientAddr(c), UserAgent: c.Get(fiber.HeaderUserAgent), BytesSent: length, Status: status}
	if err := s.billing.LogDownload(context.WithoutCancel(ctx), ev); err != nil {
		s.logger.Error("download log failed", "request_id", requestID(c), "purchase_id", d.PurchaseID.String(), "error", err.Error())
	}
	return c.SendStream(&closingReader{r: io.LimitReader(f, length), c: f}, int(length))
}

// closingReader lets fasthttp close the file once it has sent the body.
type closingReader struct {
	r io.Reader
	c io.Closer
}

func (r *closingReader) Read(p []byte) (int, error) { return r.r.Read(p) }

func (r *closingReader) Close() error { return r.c.Close() }

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
	unsatisfiable := apperr.New(apperr.RangeUnsatisfiable, "range %q cannot be satisfied for a %d-byte file", h, size)
	if !ok {
		return 0, size - 1, false, nil
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, false, unsatisfiable
	}
	switch {
	case a == "":
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
