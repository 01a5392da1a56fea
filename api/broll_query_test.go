package api

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"broll/catalog"
	"broll/catalog/search"
	"broll/internal/apperr"
)

// The catalog's query string as REST reads it: every parameter typed, then
// checked by search.Query.Validate with the MCP tool's arguments.
func TestParseBrollQuery(t *testing.T) {
	t.Parallel()
	parse := func(raw string) (search.Query, error) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		return parseBrollQuery(v)
	}

	q, err := parse("emotion=Happy&gender=female&age_range=25-34&location=%20Car%20&media_type=video" +
		"&orientation=vertical&difficulty=Easy&model_id=m-1&min_duration=2.5&max_duration=30&min_virality=40" +
		"&owned=true&search=coffee&sort_by=price&sort_order=asc&limit=500&page=3&utm_source=x")
	if err != nil {
		t.Fatal(err)
	}
	want := search.Query{Emotion: "happy", Gender: "female", AgeRange: "25-34", Location: "car", MediaType: "video",
		Orientation: "vertical", Difficulty: "easy", ModelID: "m-1", Search: "coffee", SortBy: search.SortPrice,
		SortOrder: search.SortAsc, Limit: search.MaxLimit, Offset: 200}
	if q.Owned == nil || !*q.Owned || *q.MinDuration != 2.5 || *q.MaxDuration != 30 || *q.MinVirality != 40 {
		t.Fatalf("pointers: %+v", q)
	}
	q.Owned, q.MinDuration, q.MaxDuration, q.MinVirality = nil, nil, nil, nil
	if q != want {
		t.Fatalf("got  %+v\nwant %+v", q, want)
	}

	if q, err = parse("limit=99999999999999999999999"); err != nil || q.Limit != search.MaxLimit {
		t.Fatalf("huge limit: %+v %v", q, err)
	}
	q, err = parse("")
	if err != nil || q.Limit != search.DefaultLimit || q.Offset != 0 || q.SortBy != search.SortCreatedAt || q.SortOrder != search.SortDesc {
		t.Fatalf("defaults: %+v %v", q, err)
	}
	q, err = parse("semantic_search=woman+in+a+car&offset=40&search=%20%20")
	if err != nil || q.SortBy != search.SortRelevance || q.Offset != 40 || q.Search != "" {
		t.Fatalf("semantic defaults: %+v %v", q, err)
	}
	if q, err = parse("owned=false"); err != nil || q.Owned == nil || *q.Owned {
		t.Fatalf("owned=false: %+v %v", q, err)
	}
}

func TestParseBrollQueryRejects(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", search.MaxSearchChars+1)
	cases := []struct {
		raw, field string
		allowed    []string
	}{
		{"emotion=joyful", "emotion", catalog.Emotions()},
		{"gender=other", "gender", catalog.Genders()},
		{"age_range=30-40", "age_range", catalog.AgeRanges()},
		{"media_type=audio", "media_type", catalog.MediaTypes()},
		{"orientation=diagonal", "orientation", catalog.Orientations()},
		{"sort_by=title", "sort_by", search.SortKeys()},
		{"sort_order=up", "sort_order", []string{"asc", "desc"}},
		{"owned=yes", "owned", []string{"true", "false"}},
		{"limit=abc", "limit", nil},
		{"limit=0", "limit", nil},
		{"limit=-5", "limit", nil},
		{"limit=2.5", "limit", nil},
		{"page=0", "page", nil},
		{"page=x", "page", nil},
		{"page=99999999999999999999", "page", nil},
		{"offset=-1", "offset", nil},
		{"offset=1e3", "offset", nil},
		{"page=2&offset=20", "page", nil},
		{"offset=9990&limit=20", "offset", nil},
		{"semantic_search=x&offset=990&limit=20", "offset", nil},
		{"min_duration=abc", "min_duration", nil},
		{"min_duration=-1", "min_duration", nil},
		{"max_duration=NaN", "max_duration", nil},
		{"max_duration=Inf", "max_duration", nil},
		{"min_duration=10&max_duration=5", "min_duration", nil},
		{"min_virality=ten", "min_virality", nil},
		{"min_virality=101", "min_virality", nil},
		{"semantic_search=" + url.QueryEscape(long), "semantic_search", nil},
		{"search=" + url.QueryEscape(long), "search", nil},
		{"location=" + strings.Repeat("x", 101), "location", nil},
	}
	for _, tc := range cases {
		v, err := url.ParseQuery(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseBrollQuery(v)
		ae, ok := apperr.As(err)
		if !ok || ae.Code != apperr.Invalid || ae.Field != tc.field {
			t.Errorf("%.60s: want invalid_request on %s, got %v", tc.raw, tc.field, err)
			continue
		}
		if tc.allowed != nil {
			if got, _ := ae.Fields["allowed_values"].([]string); !slices.Equal(got, tc.allowed) {
				t.Errorf("%s: allowed_values %v", tc.raw, ae.Fields["allowed_values"])
			}
			if !strings.Contains(ae.Message, tc.allowed[0]) {
				t.Errorf("%s: message %q does not list the values", tc.raw, ae.Message)
			}
		}
	}

	// Exactly search.MaxSearchChars is fine; both searches conflict.
	v := url.Values{"semantic_search": {strings.Repeat("é", search.MaxSearchChars)}}
	if _, err := parseBrollQuery(v); err != nil {
		t.Fatalf("1000 characters: %v", err)
	}
	v = url.Values{"search": {"coffee"}, "semantic_search": {"coffee"}}
	if _, err := parseBrollQuery(v); apperr.CodeOf(err) != apperr.ConflictingSearch {
		t.Fatalf("both searches: %v", err)
	}
	v = url.Values{"search": {" "}, "semantic_search": {"coffee"}}
	if _, err := parseBrollQuery(v); err != nil {
		t.Fatalf("blank search with semantic_search: %v", err)
	}
}
