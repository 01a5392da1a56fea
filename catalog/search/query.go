package search

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/internal/admission"
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

// Query is a validated catalog search: filters, at most one of Search,
// SemanticSearch and SimilarTo, a sort and a page. The zero value lists the newest clips.
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
	// Pass is the request's admission pass (the zero Pass without one):
	// under its catalog version a list may be answered from the node's
	// own order of the catalog (listings.go).
	Pass admission.Pass
	// Search is a keyword query in websearch syntax ("coffee -phone",
	// "\"behind the wheel\"", "car or bus"); plain words also match as
	// prefixes.
	Search string
	// SemanticSearch is a description matched by meaning.
	SemanticSearch string
	// SimilarTo is a clip whose stored vector the results are matched
	// with, as a semantic search's are with its text's ("more like this"):
	// the clip itself is left out. Not with Search or SemanticSearch.
	SimilarTo uuid.UUID
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
	after *paging.Cursor
}

// SearchBounds are a search's paging limits, for the adapters to read a
// request's paging with.
var SearchBounds = paging.Bounds{DefaultLimit: DefaultLimit, MaxLimit: MaxLimit, Window: MaxResultWindow}

// Validate checks a Query as the adapters fill it (from a URL query or an
// MCP tool's arguments), and normalises its texts, sort and page. Every bad
// value is an invalid_request naming the parameter (with allowed_values for
// enums); search and semantic_search together are conflicting_search_params.
// An empty search is no search. Difficulty is checked against the tiers by
// Search.
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
		{"emotion", q.Emotion, catalog.Emotions()},
		{"gender", q.Gender, catalog.Genders()},
		{"age_range", q.AgeRange, catalog.AgeRanges()},
		{"media_type", q.MediaType, catalog.MediaTypes()},
		{"orientation", q.Orientation, catalog.Orientations()},
		{"sort_by", q.SortBy, SortKeys()},
		{"sort_order", q.SortOrder, []string{SortAsc, SortDesc}},
	}
	for _, e := range enums {
		if e.value != "" && !slices.Contains(e.allowed, e.value) {
			return unknownValue(e.field, e.value, e.allowed)
		}
	}
	if utf8.RuneCountInString(q.Location) > catalog.MaxLocationChars {
		return apperr.InvalidField("location", "location must be at most %d characters", catalog.MaxLocationChars)
	}
	if utf8.RuneCountInString(q.ModelID) > catalog.MaxModelIDChars {
		return apperr.InvalidField("model_id", "model_id must be at most %d characters", catalog.MaxModelIDChars)
	}
	for _, f := range []struct {
		field string
		value *float64
	}{{"min_duration", q.MinDuration}, {"max_duration", q.MaxDuration}} {
		if d := f.value; d != nil && (math.IsNaN(*d) || math.IsInf(*d, 0) || *d < 0) {
			return BadNumber(f.field, strconv.FormatFloat(*d, 'g', -1, 64))
		}
	}
	if q.MinDuration != nil && q.MaxDuration != nil && *q.MinDuration > *q.MaxDuration {
		return apperr.InvalidField("min_duration", "min_duration %g is greater than max_duration %g", *q.MinDuration, *q.MaxDuration)
	}
	if q.MinVirality != nil && (*q.MinVirality < 0 || *q.MinVirality > 100) {
		return BadNumber("min_virality", strconv.Itoa(*q.MinVirality))
	}
	q.Search, q.SemanticSearch = strings.TrimSpace(q.Search), strings.TrimSpace(q.SemanticSearch)
	if q.Search != "" && q.SemanticSearch != "" {
		return apperr.New(apperr.ConflictingSearch, "use either search (keywords) or semantic_search (meaning), not both")
	}
	if q.SimilarTo != uuid.Nil {
		// The clip's own vector is the query: a text would be a second one.
		for _, f := range []struct{ field, value string }{{"search", q.Search}, {"semantic_search", q.SemanticSearch}} {
			if f.value != "" {
				return apperr.InvalidField(f.field, "%s does not apply to similar clips, whose query is the clip itself; "+
					"narrow them with the list filters", f.field)
			}
		}
	}
	if n := utf8.RuneCountInString(q.Search); n > MaxSearchChars {
		return apperr.InvalidField("search", "search must be at most %d characters (has %d)", MaxSearchChars, n)
	}
	if n := utf8.RuneCountInString(q.SemanticSearch); n > MaxSearchChars {
		return apperr.InvalidField("semantic_search", "semantic_search must be at most %d characters (has %d)", MaxSearchChars, n)
	}

	searching := q.Search != "" || q.byVector()
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
	pr, err := SearchBounds.Apply(paging.Request{Limit: q.Limit, Offset: q.Offset, Cursor: q.Cursor})
	if err != nil {
		return err
	}
	q.Limit, q.Offset = pr.Limit, pr.Offset
	q.after = nil
	if q.Cursor != "" {
		after, err := q.readCursor()
		if err != nil {
			return err
		}
		q.after = &after
	}
	if q.semanticRanked() && q.Offset > MaxSemanticWindow-q.Limit {
		return apperr.InvalidField("offset", "%s are paged up to the %d most similar clips "+
			"(offset + limit); add filters to narrow the search", q.rankedResults(), MaxSemanticWindow).
			With("max_result_window", MaxSemanticWindow)
	}
	return nil
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

// graphAlone says the graph a semantic ranking walks yields only clips
// the query wants, but for the few that are retired or whose vector is
// pending or of another model: no filter beside the meaning but an
// emotion, each of which has its own graph (migration 00031), and no
// words or ownership to check.
func (q Query) graphAlone() bool {
	return q.plainFilters() && q.Gender == "" && q.AgeRange == "" && q.MediaType == "" && q.Orientation == ""
}

// byVector says whether the query is matched by meaning, against a vector:
// its text's (SemanticSearch) or a clip's (SimilarTo). Which one is the
// vector source; everything else about the search is the same.
func (q Query) byVector() bool {
	return q.SemanticSearch != "" || q.SimilarTo != uuid.Nil
}

// semanticRanked says whether the results are the nearest clips in
// similarity order, served by the vector index.
func (q Query) semanticRanked() bool {
	return q.byVector() && q.SortBy == SortRelevance
}

// rankedResults names a ranking by similarity in messages.
func (q Query) rankedResults() string {
	if q.SimilarTo != uuid.Nil {
		return "similar clips"
	}
	return "semantic_search results"
}

// BadNumber is the invalid_request of a min_duration, max_duration or
// min_virality that is not a number of its range, quoting the value as
// given: the adapters refuse text that is no number with it, Validate a
// number out of range.
func BadNumber(field, given string) *apperr.Error {
	if field == "min_virality" {
		return apperr.InvalidField(field, "min_virality must be a whole number from 0 to 100, got %q", apperr.Clip(given))
	}
	return apperr.InvalidField(field, "%s must be a number of seconds of at least 0, got %q", field, apperr.Clip(given))
}

func unknownValue(field, value string, allowed []string) *apperr.Error {
	return apperr.InvalidField(field, "unknown %s %q; allowed: %s", field, apperr.Clip(value), strings.Join(allowed, ", ")).
		With("allowed_values", allowed)
}
