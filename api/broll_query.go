package api

import (
	"net/url"
	"strconv"
	"strings"

	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/internal/paging"
)

// parseBrollQuery reads the query parameters of GET /api/v1/broll into a
// search.Query, which Validate then checks as it checks the MCP tool's:
// here only text that is not a number (or a boolean) is refused. Unknown
// parameters are ignored.
func parseBrollQuery(v url.Values) (search.Query, error) {
	return parseBrollQueryOn(v, search.Query{})
}

// parseBrollQueryOn reads the query parameters into q, which holds what the
// path already says (the clip of GET /api/v1/broll/{id}/similar), so that
// Validate sees the whole query.
func parseBrollQueryOn(v url.Values, q search.Query) (search.Query, error) {
	get := func(name string) string { return strings.TrimSpace(v.Get(name)) }

	q.Emotion, q.Gender, q.AgeRange = get("emotion"), get("gender"), get("age_range")
	q.Location, q.MediaType, q.Orientation = get("location"), get("media_type"), get("orientation")
	q.Difficulty, q.ModelID = get("difficulty"), get("model_id")
	q.Search, q.SemanticSearch = get("search"), get("semantic_search")
	q.SortBy, q.SortOrder = get("sort_by"), get("sort_order")

	for _, f := range []struct {
		field string
		dest  **float64
	}{{"min_duration", &q.MinDuration}, {"max_duration", &q.MaxDuration}} {
		s := get(f.field)
		if s == "" {
			continue
		}
		d, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return q, search.BadNumber(f.field, s)
		}
		*f.dest = &d
	}
	if s := get("min_virality"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, search.BadNumber("min_virality", s)
		}
		q.MinVirality = &n
	}
	switch s := strings.ToLower(get("owned")); s {
	case "":
	case "true", "false":
		b := s == "true"
		q.Owned = &b
	default:
		return q, apperr.InvalidField("owned", "owned must be true or false, got %q", apperr.Clip(s)).
			With("allowed_values", []string{"true", "false"})
	}

	pr, err := paging.Parse(v, search.SearchBounds)
	if err != nil {
		return q, err
	}
	q.Limit, q.Offset, q.Cursor = pr.Limit, pr.Offset, pr.Cursor
	// Validate normalises q as it checks it: the caller gets the normalised q.
	err = q.Validate()
	return q, err
}
