package catalog

import (
	"math"
	"net/url"
	"slices"
	"testing"
	"unicode/utf8"

	"broll/internal/apperr"
	"broll/internal/database"
)

// FuzzParseQuery drives the catalog list/search parser (GET /api/v1/broll,
// the legacy list and the MCP search_videos tool) with arbitrary query
// strings: it must never panic, must refuse only with invalid_request naming
// a parameter or conflicting_search_params, and whatever it accepts must be
// safe to run: a bounded page inside the result window, enum values from
// their lists, text Postgres takes. The seeds run with every `go test`;
// `make fuzz` explores further.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"",
		"emotion=Happy&gender=female&age_range=25-34&location=%20Car%20&media_type=video&orientation=vertical" +
			"&difficulty=Easy&model_id=m-1&min_duration=2.5&max_duration=30&min_virality=40&owned=true" +
			"&search=coffee&sort_by=price&sort_order=asc&limit=500&page=3",
		"semantic_search=woman+giggling+behind+the+wheel&gender=female&limit=10",
		"search=coffee&semantic_search=coffee",
		"search=%22coffee+shop%22+-phone&sort_by=relevance",
		"semantic_search=x&offset=990&limit=20",
		"limit=1e400", "limit=9223372036854775808", "limit=-9223372036854775809", "limit=0", "limit=%20",
		"page=0", "page=10001", "page=9223372036854775807&limit=100", "offset=-1", "offset=9990&limit=11",
		"page=2&offset=3", "min_duration=NaN", "min_duration=Inf", "min_duration=-0", "min_duration=1e308&max_duration=1",
		"min_virality=101", "min_virality=0x10", "owned=yes", "owned=TRUE",
		"emotion=%FF", "model_id=%FF", "difficulty=laugh%00car", "location=%C3%28", "search=%ED%A0%80",
		"emotion=happy&emotion=sad", "sort_by=relevance", "sort_order=sideways", "location=" + url.QueryEscape(string(make([]byte, 101))),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return // the handler answers 400 before the parser runs
		}
		q, err := ParseQuery(v)
		if err != nil {
			ae, ok := apperr.As(err)
			if !ok {
				t.Fatalf("%q: %v is not an application error (would be a 500)", raw, err)
			}
			if !(ae.Code == apperr.Invalid && ae.Field != "") && ae.Code != apperr.ConflictingSearch {
				t.Fatalf("%q: %s on field %q, want invalid_request naming a parameter", raw, ae.Code, ae.Field)
			}
			return
		}
		checkAccepted(t, raw, q)
		// Validate is what the MCP tool runs on a Query it builds: on an
		// accepted one it must agree and change nothing.
		again := q
		if err := again.Validate(); err != nil || again != q {
			t.Fatalf("%q: Validate on the parsed query: %v, %+v != %+v", raw, err, again, q)
		}
	})
}

func checkAccepted(t *testing.T, raw string, q Query) {
	t.Helper()
	if q.Limit < 1 || q.Limit > MaxLimit || q.Offset < 0 || q.Offset+q.Limit > MaxResultWindow {
		t.Fatalf("%q: limit %d offset %d outside the result window", raw, q.Limit, q.Offset)
	}
	if q.semanticRanked() && q.Offset+q.Limit > MaxSemanticWindow {
		t.Fatalf("%q: semantic page %d+%d past its window", raw, q.Offset, q.Limit)
	}
	for _, e := range []struct {
		value   string
		allowed []string
	}{
		{q.Emotion, Emotions()}, {q.Gender, Genders()}, {q.AgeRange, AgeRanges()}, {q.MediaType, MediaTypes()},
		{q.Orientation, Orientations()}, {q.SortOrder, []string{SortAsc, SortDesc}}, {q.SortBy, SortKeys()},
	} {
		if e.value != "" && !slices.Contains(e.allowed, e.value) {
			t.Fatalf("%q: %q accepted, not one of %v", raw, e.value, e.allowed)
		}
	}
	if q.SortBy == "" || q.SortOrder == "" {
		t.Fatalf("%q: sort not normalised: %q %q", raw, q.SortBy, q.SortOrder)
	}
	if q.Search != "" && q.SemanticSearch != "" {
		t.Fatalf("%q: both searches accepted", raw)
	}
	for _, s := range []string{q.Location, q.ModelID, q.Difficulty, q.Search, q.SemanticSearch} {
		if !database.ValidText(s) {
			t.Fatalf("%q: accepted text Postgres refuses: %q", raw, s)
		}
	}
	if utf8.RuneCountInString(q.Search) > MaxSearchChars || utf8.RuneCountInString(q.SemanticSearch) > MaxSearchChars ||
		utf8.RuneCountInString(q.Location) > maxLocationChars || utf8.RuneCountInString(q.ModelID) > maxModelIDChars {
		t.Fatalf("%q: text over its length limit accepted", raw)
	}
	for _, d := range []*float64{q.MinDuration, q.MaxDuration} {
		if d != nil && (math.IsNaN(*d) || math.IsInf(*d, 0) || *d < 0) {
			t.Fatalf("%q: duration %v accepted", raw, *d)
		}
	}
	if q.MinDuration != nil && q.MaxDuration != nil && *q.MinDuration > *q.MaxDuration {
		t.Fatalf("%q: min_duration above max_duration accepted", raw)
	}
	if q.MinVirality != nil && (*q.MinVirality < 0 || *q.MinVirality > 100) {
		t.Fatalf("%q: min_virality %d accepted", raw, *q.MinVirality)
	}
}
