package catalog

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/admission"
	"broll/internal/money"
)

// Video is a clip as clients see it. The API layer adds what depends on the
// caller or the deployment: preview and thumbnail URLs, ownership and the
// download link.
type Video struct {
	ID              uuid.UUID
	Title           string
	Description     string
	Tags            []string
	Emotion         string
	Gender          string
	AgeRange        *string
	Location        *string
	MediaType       string
	Orientation     *string
	DurationSeconds *float64
	Width           *int
	Height          *int
	FPS             *float64
	Difficulty      string
	// Price is the clip's current tier price; a purchase records what it paid.
	Price         money.Cents
	ViralityScore *int
	Model         *VideoModel
	// HasPreview and HasThumbnail say whether the clip was imported with
	// those files; previews fall back to the thumbnail.
	HasPreview   bool
	HasThumbnail bool
	// Similarity is the cosine similarity to the semantic_search query; nil
	// on every other result.
	Similarity *float64
	CreatedAt  time.Time
	// RetiredAt is set on a retired clip, which only its buyers still see
	// (not on a clip waiting for its probe, which is not live either).
	RetiredAt *time.Time
	// Version is the version of the row the clip was read from (its
	// xmin; video_cache.go), 0 where the read did not say: two Videos of
	// one clip at one version hold the same details, so what is made of
	// them alone may be kept under it.
	Version uint32
}

// ScanVideo reads VideoColumns followed by a nullable similarity and the
// extra columns given.
func ScanVideo(row pgx.Row, extra ...any) (Video, error) { return scanVideo(row, nil, extra) }

// scanVideo reads VideoColumns, then the row's version when version is not
// nil (ListedColumns), a nullable similarity and the extra columns.
func scanVideo(row pgx.Row, version *uint32, extra []any) (Video, error) {
	var v Video
	var cents int64
	var modelID, modelName *string
	dest := make([]any, 0, videoColumns+2+len(extra))
	dest = append(dest, &v.ID, &v.Title, &v.Description, &v.Tags, &v.Emotion, &v.Gender, &v.AgeRange,
		&v.Location, &v.MediaType, &v.Orientation, &v.DurationSeconds, &v.Width, &v.Height, &v.FPS,
		&v.Difficulty, &cents, &v.ViralityScore, &modelID, &modelName, &v.HasPreview, &v.HasThumbnail,
		&v.CreatedAt, &v.RetiredAt)
	if version != nil {
		dest = append(dest, version)
	}
	dest = append(dest, &v.Similarity)
	dest = append(dest, extra...)
	if err := row.Scan(dest...); err != nil {
		return v, err
	}
	v.Price = money.Cents(cents)
	if version != nil {
		v.Version = *version
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if modelID != nil {
		v.Model = &VideoModel{ID: *modelID}
		if modelName != nil {
			v.Model.Name = *modelName
		}
	}
	return v, nil
}

// GetVideo returns a live clip. Unknown and retired clips are not_found:
// retiring takes a clip out of the catalog.
func (s *Service) GetVideo(ctx context.Context, id uuid.UUID) (Video, error) {
	return s.GetVideoFor(ctx, id, uuid.Nil)
}

// GetVideoFor is GetVideo for the key keyID, which also sees the retired
// clips it bought (their download links keep working; see billing).
func (s *Service) GetVideoFor(ctx context.Context, id, keyID uuid.UUID) (Video, error) {
	v, _, err := s.VideoForKey(ctx, id, keyID, admission.Pass{})
	return v, err
}
