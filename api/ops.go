package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/internal/apperr"
)

// videoError is one problem with one posted video: its 0-based index in the
// array and the field at fault.
type videoError struct {
	Index   int    `json:"index"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

type importResultJSON struct {
	Created int    `json:"created"`
	Updated int    `json:"updated"`
	Queued  int    `json:"queued"`
	Warning string `json:"warning,omitempty"`
}

// opsImport creates or updates the posted clips, all or nothing, exactly as
// `brollctl clips import` does with the same objects. The files they name
// are read from the API node's file system, below BROLL_IMPORT_DIR only
// (relative paths start there): an ops key must not be able to turn any
// file the process can read into a downloadable clip. The uploads they name
// must be the key's own, complete, and not another clip's (409 otherwise).
func (s *opsAPI) opsImport(c *fiber.Ctx) error {
	body := bytes.TrimSpace(c.Request().Body())
	if len(body) == 0 || body[0] != '[' {
		return apperr.New(apperr.Invalid, "request body must be a JSON array of clip objects")
	}
	if err := uniqueNames(body); err != nil {
		return err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return jsonError(err)
	}
	if len(raws) == 0 {
		return apperr.New(apperr.Invalid, "the array holds no clips")
	}
	clips := make([]imports.VideoInput, len(raws))
	var bad []videoError
	for i, raw := range raws {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&clips[i]); err != nil {
			ce := videoError{Index: i, Message: "must be a clip object like a line of `brollctl clips import`"}
			if ae, ok := apperr.As(jsonError(err)); ok && ae.Field != "" {
				ce.Field, ce.Message = ae.Field, ae.Message
			}
			bad = append(bad, ce)
		}
	}
	if len(bad) > 0 {
		return rejectVideos(bad, len(raws))
	}

	res, err := s.imports.ImportVideosWithin(c.UserContext(), principal(c).KeyID, s.importDir, clips)
	var ie *imports.Error
	if errors.As(err, &ie) {
		for _, l := range ie.Lines {
			bad = append(bad, videoError{Index: l.Line - 1, Field: l.Field, Message: l.Message})
		}
		if ie.Code != "" {
			return apperr.New(ie.Code, "%d of %d clips name an upload that cannot be taken now; nothing was imported", len(ie.Lines), len(raws)).
				With("errors", bad)
		}
		return rejectVideos(bad, len(raws))
	}
	out := importResultJSON{Created: res.Created, Updated: res.Updated, Queued: res.Queued}
	if err != nil {
		if res.Created+res.Updated == 0 {
			return err
		}
		// The clips are saved; failing the request would invite a retry
		// that creates the id-less ones twice.
		s.logger.Error("ops import: embeddings not queued", "request_id", requestID(c), "error", err.Error())
		out.Warning = "clips saved, but not all were queued for embedding; they stay out of semantic search until `brollctl clips reembed`"
	}
	return c.JSON(out)
}

func rejectVideos(bad []videoError, total int) error {
	clips := map[int]bool{}
	for _, b := range bad {
		clips[b.Index] = true
	}
	return apperr.New(apperr.Invalid, "%d of %d clips are invalid; nothing was imported", len(clips), total).
		With("errors", bad)
}

type retiredJSON struct {
	ID             uuid.UUID `json:"id"`
	RetiredAt      time.Time `json:"retired_at"`
	AlreadyRetired bool      `json:"already_retired"`
}

// opsRetire retires a clip: gone from search and details, kept by its buyers.
func (s *opsAPI) opsRetire(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.InvalidField("id", "video id %q is not a UUID", apperr.Clip(c.Params("id")))
	}
	r, err := s.catalog.Retire(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(retiredJSON{ID: r.ID, RetiredAt: r.RetiredAt, AlreadyRetired: r.Already})
}

type opsVideoJSON struct {
	ID               uuid.UUID  `json:"id"`
	Title            string     `json:"title"`
	MediaStatus      string     `json:"media_status"`
	MediaError       *string    `json:"media_error"`
	MediaProcessedAt *time.Time `json:"media_processed_at"`
	Listed           bool       `json:"listed"`
	RetiredAt        *time.Time `json:"retired_at"`
	EmbeddingStatus  string     `json:"embedding_status"`
	CreatedAt        time.Time  `json:"created_at"`
	// Mismatches are the figures on which the clip's line and its file
	// disagree; the clip shows the file's.
	Mismatches    []catalog.Mismatch `json:"mismatches"`
	TrailingBytes *int64             `json:"trailing_bytes"`
}

// opsVideo shows content operations any clip, listed or not: whether its
// media passed the probe, and why not, and where its line disagrees with
// its file.
func (s *opsAPI) opsVideo(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.InvalidField("id", "video id %q is not a UUID", c.Params("id"))
	}
	v, err := s.catalog.ClipState(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(opsVideoJSON{ID: v.ID, Title: v.Title, MediaStatus: v.MediaStatus, MediaError: v.MediaError,
		MediaProcessedAt: v.MediaProcessed, Listed: v.Listed, RetiredAt: v.RetiredAt,
		EmbeddingStatus: v.EmbeddingStatus, CreatedAt: v.CreatedAt, Mismatches: v.Mismatches, TrailingBytes: v.TrailingBytes})
}
