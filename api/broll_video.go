package api

import (
	"context"
	"math"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/billing"
	"broll/catalog"
	"broll/internal/money"
)

// videoJSON is the Video object (the Video schema of api/openapi.json).
type videoJSON struct {
	ID              uuid.UUID   `json:"id"`
	Title           string      `json:"title"`
	Description     string      `json:"description"`
	Tags            []string    `json:"tags"`
	Emotion         string      `json:"emotion"`
	Gender          string      `json:"gender"`
	AgeRange        *string     `json:"age_range"`
	Location        *string     `json:"location"`
	MediaType       string      `json:"media_type"`
	Orientation     *string     `json:"orientation"`
	DurationSeconds *float64    `json:"duration_seconds"`
	Width           *int        `json:"width"`
	Height          *int        `json:"height"`
	FPS             *float64    `json:"fps"`
	Difficulty      string      `json:"difficulty"`
	Price           money.Cents `json:"price"`
	Currency        string      `json:"currency"`
	ViralityScore   *int        `json:"virality_score"`
	Model           *modelJSON  `json:"model"`
	PreviewURL      string      `json:"preview_url"`
	ThumbnailURL    *string     `json:"thumbnail_url"`
	Owned           bool        `json:"owned"`
	DownloadURL     *string     `json:"download_url"`
	// DownloadURLExpiresAt goes with download_url, as in purchase results.
	DownloadURLExpiresAt *time.Time `json:"download_url_expires_at,omitempty"`
	Similarity           *float64   `json:"similarity,omitempty"`
	CreatedAt            time.Time  `json:"created_at"`
	// Retired is only ever true for a clip the caller bought before it was
	// retired; nobody else sees retired clips.
	Retired bool `json:"retired,omitempty"`
	// encoded is this object as JSON, when it is made of the clip's row
	// alone (clipFragments); a list answer writes it in place of encoding
	// (videoList's appendJSON).
	encoded []byte
}

type modelJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// renderVideos turns catalog videos into Video objects for the calling key:
// ownership and fresh download links come from its purchases.
func (s *clipsAPI) renderVideos(c *fiber.Ctx, keyID uuid.UUID, videos []catalog.Video) ([]videoJSON, error) {
	ids := make([]uuid.UUID, len(videos))
	for i, v := range videos {
		ids[i] = v.ID
	}
	ownerships, err := s.catalog.OwnershipsFor(c.UserContext(), keyID, ids, pass(c))
	if err != nil {
		return nil, err
	}
	owned := s.billing.OwnedLinks(ownerships)
	out := make([]videoJSON, len(videos))
	now := s.now()
	for i, v := range videos {
		out[i] = s.renderVideo(v)
		if p, ok := owned[v.ID]; ok {
			out[i].setOwned(p.Download)
		}
		out[i].encoded = s.fragments.of(v, &out[i], now)
	}
	return out, nil
}

// renderClip is renderVideos for one clip whose purchase by the calling key
// is known (catalog.VideoForKey): Valid when the key owns it.
func (s *clipsAPI) renderClip(ctx context.Context, v catalog.Video, bought uuid.NullUUID) (videoJSON, error) {
	j := s.renderVideo(v)
	if bought.Valid {
		link, err := s.billing.DownloadLink(ctx, bought.UUID)
		if err != nil {
			return videoJSON{}, err
		}
		j.setOwned(link)
	}
	return j, nil
}

// renderVideo is a Video object before ownership.
func (s *clipsAPI) renderVideo(v catalog.Video) videoJSON {
	j := videoJSON{
		ID: v.ID, Title: v.Title, Description: v.Description, Tags: v.Tags, Emotion: v.Emotion,
		Gender: v.Gender, AgeRange: v.AgeRange, Location: v.Location, MediaType: v.MediaType,
		Orientation: v.Orientation, DurationSeconds: v.DurationSeconds, Width: v.Width, Height: v.Height,
		FPS: v.FPS, Difficulty: v.Difficulty, Price: v.Price, Currency: "USD",
		ViralityScore: v.ViralityScore, CreatedAt: v.CreatedAt, Retired: v.RetiredAt != nil,
		PreviewURL: s.mediaURL(previewsPath, v.ID),
	}
	if v.Model != nil {
		j.Model = &modelJSON{ID: v.Model.ID, Name: v.Model.Name}
	}
	if v.HasThumbnail {
		u := s.mediaURL(thumbnailsPath, v.ID)
		j.ThumbnailURL = &u
	}
	if v.Similarity != nil {
		// Six decimals tell any two clips apart that a client could.
		sim := math.Round(*v.Similarity*1e6) / 1e6
		j.Similarity = &sim
	}
	return j
}

// setOwned marks the clip owned, with a fresh link to its file.
func (j *videoJSON) setOwned(link billing.Link) {
	j.Owned = true
	if link.URL != "" {
		u, exp := link.URL, link.ExpiresAt
		j.DownloadURL, j.DownloadURLExpiresAt = &u, &exp
	}
}

func (s *clipsAPI) mediaURL(path string, id uuid.UUID) string {
	return s.baseURL + path + id.String()
}
