package search

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unicode/utf8"

	"broll/catalog"
	"broll/internal/apperr"
	"broll/internal/database"
)

// FuzzQueryValidate drives the catalog's one check of a search (GET
// /api/v1/broll and the MCP search_videos tool fill a Query, then call
// Validate) with arbitrary values: it must never panic, must refuse only
// with invalid_request naming a parameter or conflicting_search_params, and
// whatever it accepts must be safe to run: a bounded page inside the result
// window, enum values from their lists, text Postgres takes. The seeds run
// with every `go test`; `make fuzz` explores further.
func FuzzQueryValidate(f *testing.F) {
	type seed struct {
		emotion, gender, ageRange, location, mediaType, orientation, difficulty, modelID string
		search, semantic, sortBy, sortOrder, cursor                                      string
		minDur, maxDur                                                                   float64
		minVir, limit, offset                                                            int
		hasMinDur, hasMaxDur, hasMinVir                                                  bool
	}
	for _, s := range []seed{
		{},
		{emotion: "Happy", gender: "female", ageRange: "25-34", location: " Car ", mediaType: "video", orientation: "vertical",
			difficulty: "Easy", modelID: "m-1", search: "coffee", sortBy: "price", sortOrder: "asc",
			minDur: 2.5, maxDur: 30, minVir: 40, limit: 500, offset: 200, hasMinDur: true, hasMaxDur: true, hasMinVir: true},
		{semantic: "woman giggling behind the wheel", gender: "female", limit: 10},
		{search: "coffee", semantic: "coffee"},
		{search: `"coffee shop" -phone`, sortBy: "relevance"},
		{semantic: "x", offset: 990, limit: 20},
		{limit: math.MaxInt}, {limit: math.MinInt}, {limit: -1}, {offset: -1}, {offset: math.MaxInt}, {offset: 9990, limit: 11},
		{cursor: "abc", offset: 3}, {cursor: "!!!"},
		{minDur: math.NaN(), hasMinDur: true}, {maxDur: math.Inf(1), hasMaxDur: true}, {minDur: math.Copysign(0, -1), hasMinDur: true},
		{minDur: 1e308, maxDur: 1, hasMinDur: true, hasMaxDur: true},
		{minVir: 101, hasMinVir: true}, {minVir: -1, hasMinVir: true},
		{emotion: "\xff"}, {modelID: "\xff"}, {difficulty: "laugh\x00car"}, {location: "\xc3\x28"}, {search: "\xed\xa0\x80"},
		{sortBy: "relevance"}, {sortOrder: "sideways"}, {location: string(make([]byte, 101))},
	} {
		f.Add(s.emotion, s.gender, s.ageRange, s.location, s.mediaType, s.orientation, s.difficulty, s.modelID,
			s.search, s.semantic, s.sortBy, s.sortOrder, s.cursor, s.minDur, s.maxDur, s.minVir, s.limit, s.offset,
			s.hasMinDur, s.hasMaxDur, s.hasMinVir)
	}
	f.Fuzz(func(t *testing.T, emotion, gender, ageRange, location, mediaType, orientation, difficulty, modelID,
		search, semantic, sortBy, sortOrder, cursor string, minDur, maxDur float64, minVir, limit, offset int,
		hasMinDur, hasMaxDur, hasMinVir bool) {
		q := Query{Emotion: emotion, Gender: gender, AgeRange: ageRange, Location: location, MediaType: mediaType,
			Orientation: orientation, Difficulty: difficulty, ModelID: modelID, Search: search, SemanticSearch: semantic,
			SortBy: sortBy, SortOrder: sortOrder, Cursor: cursor, Limit: limit, Offset: offset}
		if hasMinDur {
			q.MinDuration = &minDur
		}
		if hasMaxDur {
			q.MaxDuration = &maxDur
		}
		if hasMinVir {
			q.MinVirality = &minVir
		}
		raw := fmt.Sprintf("%+v", q)
		if err := q.Validate(); err != nil {
			ae, ok := apperr.As(err)
			if !ok {
				t.Fatalf("%s: %v is not an application error (would be a 500)", raw, err)
			}
			if !(ae.Code == apperr.Invalid && ae.Field != "") && ae.Code != apperr.ConflictingSearch {
				t.Fatalf("%s: %s on field %q, want invalid_request naming a parameter", raw, ae.Code, ae.Field)
			}
			return
		}
		checkAccepted(t, raw, q)
		// Validate normalises: on an accepted query it must agree and change
		// nothing (the pointers are the same ones, so == compares them).
		again := q
		if err := again.Validate(); err != nil || again != q {
			t.Fatalf("%s: Validate again: %v, %+v != %+v", raw, err, again, q)
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
		{q.Emotion, catalog.Emotions()}, {q.Gender, catalog.Genders()}, {q.AgeRange, catalog.AgeRanges()}, {q.MediaType, catalog.MediaTypes()},
		{q.Orientation, catalog.Orientations()}, {q.SortOrder, []string{SortAsc, SortDesc}}, {q.SortBy, SortKeys()},
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
		utf8.RuneCountInString(q.Location) > catalog.MaxLocationChars || utf8.RuneCountInString(q.ModelID) > catalog.MaxModelIDChars {
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
