package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
)

// Public media routes: the low-resolution preview and the thumbnail of every
// live clip, without a key, so that clients can show them in <img> and
// <video> tags and CDNs can cache them. Full-quality files are only served
// behind a purchase's signed link (download.go).
const (
	previewsPath   = "/media/previews/"
	thumbnailsPath = "/media/thumbnails/"
)

// mediaMaxAge lets browsers and CDNs keep a file for an hour; a re-imported
// clip changes its ETag, so a revalidation after that picks up new files.
const mediaMaxAge = "public, max-age=3600"

func (s *clipsAPI) publicMedia(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := uuid.Parse(c.Params("video_id"))
		if err != nil {
			return apperr.InvalidField("video_id", "video id %q is not a UUID", apperr.Clip(c.Params("video_id")))
		}
		m, err := s.catalog.OpenPublicMedia(c.UserContext(), id, kind)
		if err != nil {
			return err
		}
		if m.URL != "" {
			// The presigned URL works for seconds: the redirect must not
			// be cached longer than that.
			c.Set(fiber.HeaderCacheControl, "no-store")
			return c.Redirect(m.URL, fiber.StatusFound)
		}
		c.Set(fiber.HeaderETag, m.ETag)
		c.Set(fiber.HeaderCacheControl, mediaMaxAge)
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		if c.Get(fiber.HeaderIfNoneMatch) == m.ETag {
			m.File.Close()
			return c.SendStatus(fiber.StatusNotModified)
		}
		c.Set(fiber.HeaderContentType, m.ContentType)
		size := m.File.Size()
		return c.SendStream(&closingReader{r: m.File, c: m.File}, int(size))
	}
}
