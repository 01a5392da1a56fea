package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/internal/paging"
)

// findSimilarArgs are the arguments of find_similar_videos: the clip, and
// the list filters, limit and cursor of GET /api/v1/broll/{id}/similar.
type findSimilarArgs struct {
	VideoID     string   `json:"video_id" jsonschema:"the clip to find more like, as returned by search_videos or get_video"`
	Emotion     string   `json:"emotion,omitempty" jsonschema:"emotion shown in the clip"`
	Gender      string   `json:"gender,omitempty" jsonschema:"gender of the person filmed"`
	AgeRange    string   `json:"age_range,omitempty" jsonschema:"age range of the person filmed"`
	Location    string   `json:"location,omitempty" jsonschema:"where the clip was filmed (exact name, case-insensitive)"`
	MediaType   string   `json:"media_type,omitempty" jsonschema:"video or still image"`
	Orientation string   `json:"orientation,omitempty" jsonschema:"frame orientation; vertical suits stories and reels"`
	Difficulty  string   `json:"difficulty,omitempty" jsonschema:"price tier name, e.g. easy, medium or hard; the tier sets the price"`
	ModelID     string   `json:"model_id,omitempty" jsonschema:"only clips featuring this creator (the id of a video's model)"`
	MinDuration *float64 `json:"min_duration,omitempty" jsonschema:"shortest duration in seconds"`
	MaxDuration *float64 `json:"max_duration,omitempty" jsonschema:"longest duration in seconds"`
	MinVirality *int     `json:"min_virality,omitempty" jsonschema:"lowest virality score, 0 to 100"`
	Owned       *bool    `json:"owned,omitempty" jsonschema:"true: only clips this key already bought; false: only clips it has not"`
	Limit       *int     `json:"limit,omitempty" jsonschema:"results per page, default 20, at most 100"`
	Cursor      string   `json:"cursor,omitempty" jsonschema:"pagination.next_cursor of the previous call with the same arguments: the next page"`
}

// query is the arguments as the search.Query REST builds for the route,
// built directly; Validate then checks it as it checks REST's.
func (a findSimilarArgs) query() (search.Query, error) {
	id, err := uuid.Parse(strings.TrimSpace(a.VideoID))
	if err != nil {
		return search.Query{}, apperr.InvalidField("video_id", "video_id %q is not a UUID", apperr.Clip(a.VideoID))
	}
	if err := search.CheckSimilarTo(id); err != nil {
		return search.Query{}, err
	}
	q := search.Query{SimilarTo: id, Emotion: a.Emotion, Gender: a.Gender, AgeRange: a.AgeRange, Location: a.Location,
		MediaType: a.MediaType, Orientation: a.Orientation, Difficulty: a.Difficulty, ModelID: a.ModelID,
		MinDuration: a.MinDuration, MaxDuration: a.MaxDuration, MinVirality: a.MinVirality, Owned: a.Owned}
	pr, err := search.SearchBounds.Check(paging.Ask{Limit: a.Limit, Cursor: a.Cursor})
	if err != nil {
		return q, err
	}
	q.Limit, q.Cursor = pr.Limit, pr.Cursor
	err = q.Validate()
	return q, err
}

func refineSimilarSchema(s *jsonschema.Schema) {
	s.Properties["video_id"].Format = "uuid"
	refineFilterSchema(s.Properties)
}

func (s *mcpTools) findSimilarVideosTool(ctx context.Context, c *fiber.Ctx, a findSimilarArgs) (brollListJSON, string, error) {
	q, err := a.query()
	if err != nil {
		return brollListJSON{}, "", err
	}
	page, out, err := s.clips.searchBroll(ctx, c, q)
	if err != nil {
		return out, "", err
	}
	matching := plural(page.Total, "similar clip")
	if !page.TotalExact {
		matching = "at least " + matching
	}
	summary := fmt.Sprintf("%s; %d on this page, nearest first.", matching, len(page.Videos))
	if page.NextCursor != "" {
		summary += " More with cursor=pagination.next_cursor."
	}
	return out, summary, nil
}
