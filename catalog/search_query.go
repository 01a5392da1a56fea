package catalog

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/paging"
)

// Paging and size limits of a search.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxSearchChars bounds search and semantic_search texts.
	MaxSearchChars = 1000
	// MaxResultWindow bounds offset+limit: deep OFFSETs cost a scan of
	// everything skipped, and totals are only counted this far.
	MaxResultWindow = 10_000
	// MaxSemanticWindow bounds offset+limit of a semantic search ranked by
	// similarity: the index walks its graph from the query outwards, and past
	// the nearest thousand clips "similar" no longer means much.
	MaxSemanticWindow = 1_000
)

// Sort keys and orders of a search.
const (
	SortCreatedAt = "created_at"
	SortPrice     = "price"
	SortDuration  = "duration_seconds"
	SortVirality  = "virality_score"
	SortRelevance = "relevance"

	SortAsc  = "asc"
	SortDesc = "desc"
)

// SortKeys lists the sort_by values.
func SortKeys() []string {
	return []string{SortCreatedAt, SortPrice, SortDuration, SortVirality, SortRelevance}
}

// Query is a validated catalog search: filters, at most one of Search and
// SemanticSearch, a sort and a page. The zero value lists the newest clips.
type Query struct {
	Emotion     string
	Gender      string
	AgeRange    string
	Location    string
	MediaType   string
	Orientation string
	Difficulty  string
	ModelID     string
	MinDuration *float64
	MaxDuration *float64
	MinVirality *int
	// Owned keeps only clips KeyID has bought (true) or has not (false).
	Owned *bool
	KeyID uuid.UUID
	// Search is a keyword query in websearch syntax ("coffee -phone",
	// "\"behind the wheel\"", "car or bus"); plain words also match as
	// prefixes.
	Search string
	// SemanticSearch is a description matched by meaning.
	SemanticSearch string
	// SortBy is one of SortKeys; empty means relevance for a search and
	// created_at otherwise. SortOrder is asc or desc (default desc); it does
	// not apply to relevance, which always lists the best match first.
	SortBy    string
	SortOrder string
	Limit     int // 0 means DefaultLimit; above MaxLimit is clamped
	Offset    int
	// Cursor is a Page.NextCursor of the same query: the page after it
	// (keyset paging, stable while clips are added). Not with Offset.
	Cursor string
	// after is Cursor decoded by Validate.
	after *position
}

// ParseQuery reads the query parameters of GET /api/v1/broll. Every bad
// value is an invalid_request naming the parameter (with allowed_values for
// enums); search and semantic_search together are conflicting_search_params.
// Unknown parameters are ignored, and so is an empty search. Difficulty is
// checked against the tiers by Search.
func ParseQuery(v url.Values) (Query, error) {
	var q Query
	get := func(name string) string { return strings.TrimSpace(v.Get(name)) }

	q.Emotion, q.Gender, q.AgeRange = get("emotion"), get("gender"), get("age_range")
	q.Location, q.MediaType, q.Orientation = get("location"), get("media_type"), get("orientation")
	q.Difficulty, q.ModelID = get("difficulty"), get("model_id")
	q.Search, q.SemanticSearch = get("search"), get("semantic_search")
	q.SortBy, q.SortOrder = get("sort_by"), get("sort_order")

	var err error
	if q.MinDuration, err = parseSeconds("min_duration", get("min_duration")); err != nil {
		return q, err
	}
	if q.MaxDuration, err = parseSeconds("max_duration", get("max_duration")); err != nil {
		return q, err
	}
	if s := get("min_virality"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 100 {
			return q, apperr.InvalidField("min_virality", "min_virality must be a whole number from 0 to 100, got %q", s)
		}
		q.MinVirality = &n
	}
	switch s := strings.ToLower(get("owned")); s {
	case "":
	case "true", "false":
		b := s == "true"
		q.Owned = &b
	default:
		return q, apperr.InvalidField("owned", "owned must be true or false, got %q", s).
			With("allowed_values", []string{"true", "false"})
	}

	pr, err := paging.Parse(v, paging.Bounds{DefaultLimit: DefaultLimit, MaxLimit: MaxLimit, Window: MaxResultWindow})
	if err != nil {
		return q, err
	}
	q.Limit, q.Offset, q.Cursor = pr.Limit, pr.Offset, pr.Cursor
	// Validate normalises q as it checks it: the caller gets the normalised q.
	err = q.Validate()
	return q, err
}

// Validate checks a Query built by hand (the MCP tool builds one) as
// ParseQuery checks URL parameters, and normalises its sort and limit.
func (q *Query) Validate() error {
	// Every text reaches Postgres, which refuses invalid UTF-8 and NUL: say
	// which parameter is at fault instead of failing the query.
	for _, f := range []struct{ field, value string }{
		{"emotion", q.Emotion}, {"gender", q.Gender}, {"age_range", q.AgeRange}, {"location", q.Location},
		{"media_type", q.MediaType}, {"orientation", q.Orientation}, {"difficulty", q.Difficulty},
		{"model_id", q.ModelID}, {"search", q.Search}, {"semantic_search", q.SemanticSearch},
		{"sort_by", q.SortBy}, {"sort_order", q.SortOrder},
	} {
		if !database.ValidText(f.value) {
			return apperr.InvalidField(f.field, "%s must be UTF-8 text without NUL characters", f.field)
		}
	}
	// Enum values and locations are stored lower-case (import normalises
	// locations), so matching ignores case.
	for _, f := range []*string{&q.Emotion, &q.Gender, &q.AgeRange, &q.Location, &q.MediaType,
		&q.Orientation, &q.Difficulty, &q.SortBy, &q.SortOrder} {
		*f = strings.ToLower(strings.TrimSpace(*f))
	}
	q.ModelID = strings.TrimSpace(q.ModelID)
	enums := []struct {
		field, value string
		allowed      []string
	}{
		{"emotion", q.Emotion, Emotions()},
		{"gender", q.Gender, Genders()},
		{"age_range", q.AgeRange, AgeRanges()},
		{"media_type", q.MediaType, MediaTypes()},
		{"orientation", q.Orientation, Orientations()},
		{"sort_by", q.SortBy, SortKeys()},
		{"sort_order", q.SortOrder, []string{SortAsc, SortDesc}},
	}
	for _, e := range enums {
		if e.value != "" && !slices.Contains(e.allowed, e.value) {
			return unknownValue(e.field, e.value, e.allowed)
		}
	}
	if utf8.RuneCountInString(q.Location) > maxLocationChars {
		return apperr.InvalidField("location", "location must be at most %d characters", maxLocationChars)
	}
	if utf8.RuneCountInString(q.ModelID) > maxModelIDChars {
		return apperr.InvalidField("model_id", "model_id must be at most %d characters", maxModelIDChars)
	}
	if q.MinDuration != nil && q.MaxDuration != nil && *q.MinDuration > *q.MaxDuration {
		return apperr.InvalidField("min_duration", "min_duration %g is greater than max_duration %g", *q.MinDuration, *q.MaxDuration)
	}
	if q.MinVirality != nil && (*q.MinVirality < 0 || *q.MinVirality > 100) {
		return apperr.InvalidField("min_virality", "min_virality must be from 0 to 100")
	}
	q.Search, q.SemanticSearch = strings.TrimSpace(q.Search), strings.TrimSpace(q.SemanticSearch)
	if q.Search != "" && q.SemanticSearch != "" {
		return apperr.New(apperr.ConflictingSearch, "use either search (keywords) or semantic_search (meaning), not both")
	}
	if n := utf8.RuneCountInString(q.Search); n > MaxSearchChars {
		return apperr.InvalidField("search", "search must be at most %d characters (has %d)", MaxSearchChars, n)
	}
	if n := utf8.RuneCountInString(q.SemanticSearch); n > MaxSearchChars {
		return apperr.InvalidField("semantic_search", "semantic_search must be at most %d characters (has %d)", MaxSearchChars, n)
	}

	searching := q.Search != "" || q.SemanticSearch != ""
	switch {
	case q.SortBy == "" && searching:
		q.SortBy = SortRelevance
	case q.SortBy == "" || (q.SortBy == SortRelevance && !searching):
		// Without a search there is nothing to be relevant to.
		q.SortBy = SortCreatedAt
	}
	if q.SortOrder == "" {
		q.SortOrder = SortDesc
	}
	if q.Limit < 0 {
		return apperr.InvalidField("limit", "limit must be at least 1")
	}
	if q.Offset < 0 {
		return apperr.InvalidField("offset", "offset must be at least 0")
	}
	q.Limit = q.limit()
	if q.Offset > MaxResultWindow-q.Limit {
		return paging.WindowError("offset", MaxResultWindow)
	}
	q.after = nil
	if q.Cursor != "" {
		if q.Offset != 0 {
			return apperr.InvalidField("cursor", "use cursor or page/offset, not both")
		}
		after, err := q.decodeCursor()
		if err != nil {
			return err
		}
		q.after = &after
	}
	if q.semanticRanked() && q.Offset > MaxSemanticWindow-q.Limit {
		return apperr.InvalidField("offset", "semantic_search results are paged up to the %d most similar clips "+
			"(offset + limit); add filters to narrow the search", MaxSemanticWindow).
			With("max_result_window", MaxSemanticWindow)
	}
	return nil
}

func (q Query) limit() int {
	if q.Limit == 0 {
		return DefaultLimit
	}
	return min(q.Limit, MaxLimit)
}

// plainFilters says the query filters, if at all, on an emotion and on
// enums of a handful of values (gender, age range, orientation, media
// type), whose share of the catalog the planner knows without the values:
// a plan made once, without them, is the plan made for any of them. A
// location, model, difficulty tier, duration, virality or ownership
// filter, or keywords, may match few clips, which only a plan made for the
// value can see (and then sort those few instead of walking an index in
// order).
func (q Query) plainFilters() bool {
	return q.Location == "" && q.ModelID == "" && q.Difficulty == "" && q.MinDuration == nil &&
		q.MaxDuration == nil && q.MinVirality == nil && q.Owned == nil && q.Search == ""
}

// semanticRanked says whether the results are the nearest clips in
// similarity order, served by the vector index.
func (q Query) semanticRanked() bool {
	return q.SemanticSearch != "" && q.SortBy == SortRelevance
}

func parseSeconds(field, s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return nil, apperr.InvalidField(field, "%s must be a number of seconds of at least 0, got %q", field, s)
	}
	return &f, nil
}

func unknownValue(field, value string, allowed []string) *apperr.Error {
	return apperr.InvalidField(field, "unknown %s %q; allowed: %s", field, value, strings.Join(allowed, ", ")).
		With("allowed_values", allowed)
}
