package search

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"broll/catalog/catalogtest"
)

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dur := func(c fixClip) float64 {
		if c.In.DurationSeconds == nil {
			return -1
		}
		return *c.In.DurationSeconds
	}
	cases := []struct {
		name string
		q    Query
		keep func(c fixClip) bool
	}{
		{"everything", Query{}, nil},
		{"emotion", Query{Emotion: "laughing"}, func(c fixClip) bool { return c.In.Emotion == "laughing" }},
		{"gender", Query{Gender: "male"}, func(c fixClip) bool { return c.In.Gender == "male" }},
		{"age range", Query{AgeRange: "18-24"}, func(c fixClip) bool { return c.In.AgeRange == "18-24" }},
		{"location ignores case", Query{Location: " HOME "}, func(c fixClip) bool { return c.In.Location == "home" }},
		{"media type", Query{MediaType: "image"}, func(c fixClip) bool { return c.In.MediaType == "image" }},
		{"orientation", Query{Orientation: "square"}, func(c fixClip) bool { return c.In.Orientation == "square" }},
		{"difficulty", Query{Difficulty: "hard"}, func(c fixClip) bool { return c.In.Difficulty == "hard" }},
		{"model", Query{ModelID: "m-bea"}, func(c fixClip) bool { return c.In.Model != nil && c.In.Model.ID == "m-bea" }},
		{"min duration", Query{MinDuration: ptr(10.0)}, func(c fixClip) bool { return dur(c) >= 10 }},
		{"max duration", Query{MaxDuration: ptr(10.0)}, func(c fixClip) bool { return dur(c) >= 0 && dur(c) <= 10 }},
		{"duration range", Query{MinDuration: ptr(10.0), MaxDuration: ptr(20.0)}, func(c fixClip) bool { return dur(c) >= 10 && dur(c) <= 20 }},
		{"min virality", Query{MinVirality: ptr(70)}, func(c fixClip) bool { return c.In.ViralityScore != nil && *c.In.ViralityScore >= 70 }},
		{"emotion, gender and orientation", Query{Emotion: "happy", Gender: "female", Orientation: "vertical"}, func(c fixClip) bool {
			return c.In.Emotion == "happy" && c.In.Gender == "female" && c.In.Orientation == "vertical"
		}},
		{"tier, virality and media type", Query{Difficulty: "easy", MinVirality: ptr(50), MediaType: "video"}, func(c fixClip) bool {
			return c.In.Difficulty == "easy" && c.In.ViralityScore != nil && *c.In.ViralityScore >= 50 &&
				c.In.MediaType != "image"
		}},
		{"nothing matches", Query{ModelID: "m-nobody"}, func(fixClip) bool { return false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Limit = 100
			p := f.search(t, tc.q)
			want := catalogtest.ClipKeys(f.Live(tc.keep))
			if got := f.Keys(p.Videos); !slices.Equal(got, want) {
				t.Fatalf("got  %v\nwant %v", got, want)
			}
			if p.Total != len(want) || !p.TotalExact || p.HasMore {
				t.Fatalf("total %d exact %v has_more %v, want %d", p.Total, p.TotalExact, p.HasMore, len(want))
			}
			for _, v := range p.Videos {
				if v.Similarity != nil || v.RetiredAt != nil {
					t.Fatalf("%s: similarity %v retired %v", v.Title, v.Similarity, v.RetiredAt)
				}
			}
		})
	}
	if len(f.Live(func(c fixClip) bool { return c.In.Emotion == "laughing" })) < 3 {
		t.Fatal("fixture too small to test filters")
	}
}

func TestSearchSorts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// byKey sorts live clips by a key, clips without one last, ties by id
	// in the same direction.
	byKey := func(desc bool, key func(c fixClip) *float64) []string {
		cs := f.Live(nil)
		slices.SortFunc(cs, func(a, b fixClip) int {
			ka, kb := key(a), key(b)
			c := 0
			switch {
			case ka == nil && kb == nil:
			case ka == nil:
				return 1
			case kb == nil:
				return -1
			default:
				c = cmp.Compare(*ka, *kb)
			}
			if c == 0 {
				c = strings.Compare(a.ID.String(), b.ID.String())
			}
			if desc {
				return -c
			}
			return c
		})
		return catalogtest.ClipKeys(cs)
	}
	price := func(c fixClip) *float64 { return ptr(float64(catalogtest.TierPrice(c.In.Difficulty))) }
	duration := func(c fixClip) *float64 { return c.In.DurationSeconds }
	virality := func(c fixClip) *float64 {
		if c.In.ViralityScore == nil {
			return nil
		}
		return ptr(float64(*c.In.ViralityScore))
	}
	oldestFirst := catalogtest.ClipKeys(f.Live(nil))
	slices.Reverse(oldestFirst)

	cases := []struct {
		by, order string
		want      []string
	}{
		{"", "", catalogtest.ClipKeys(f.Live(nil))},
		{SortCreatedAt, SortAsc, oldestFirst},
		{SortPrice, SortAsc, byKey(false, price)},
		{SortPrice, SortDesc, byKey(true, price)},
		{SortDuration, SortAsc, byKey(false, duration)},
		{SortDuration, SortDesc, byKey(true, duration)},
		{SortVirality, "", byKey(true, virality)},
		{SortVirality, SortAsc, byKey(false, virality)},
		// Relevance without a search means nothing: newest first.
		{SortRelevance, "", catalogtest.ClipKeys(f.Live(nil))},
	}
	for _, tc := range cases {
		p := f.search(t, Query{SortBy: tc.by, SortOrder: tc.order, Limit: 100})
		if got := f.Keys(p.Videos); !slices.Equal(got, tc.want) {
			t.Errorf("sort %q %q:\ngot  %v\nwant %v", tc.by, tc.order, got, tc.want)
		}
	}
}

func TestSearchPagination(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	all := catalogtest.ClipKeys(f.Live(nil))
	var seen []string
	pages := (len(all) + 6) / 7
	for page := 1; page <= pages; page++ {
		p := f.search(t, Query{Limit: 7, Offset: (page - 1) * 7})
		if p.Page != page || p.Limit != 7 || p.Total != len(all) || p.HasMore != (page < pages) {
			t.Fatalf("page %d: %+v", page, Page{Limit: p.Limit, Offset: p.Offset, Page: p.Page, Total: p.Total, HasMore: p.HasMore})
		}
		seen = append(seen, f.Keys(p.Videos)...)
	}
	if !slices.Equal(seen, all) {
		t.Fatalf("pages cover\n%v\nwant\n%v", seen, all)
	}

	// Offset pages of the orders whose ids come from the sort index alone
	// (by price, newest, with and without an emotion) cover the order.
	for _, q := range []Query{{SortBy: SortPrice, SortOrder: SortAsc}, {SortBy: SortPrice}, {SortOrder: SortAsc},
		{SortBy: SortPrice, Emotion: "happy"}, {Emotion: "happy", SortOrder: SortAsc}} {
		q.Limit = 100
		whole := f.Keys(f.search(t, q).Videos)
		var paged []string
		for off := 0; off < len(whole); off += 3 {
			q.Limit, q.Offset = 3, off
			paged = append(paged, f.Keys(f.search(t, q).Videos)...)
		}
		if len(whole) <= 3 || !slices.Equal(paged, whole) {
			t.Errorf("%+v: offset pages\n%v\nwant\n%v", q, paged, whole)
		}
	}

	p := f.search(t, Query{Limit: 5, Offset: 3})
	if got := f.Keys(p.Videos); !slices.Equal(got, all[3:8]) || p.Page != 1 || !p.HasMore {
		t.Fatalf("offset 3: %v page %d", got, p.Page)
	}
	p = f.search(t, Query{Limit: 10, Offset: 1000})
	if len(p.Videos) != 0 || p.HasMore || p.Total != len(all) || p.Page != 101 {
		t.Fatalf("past the end: %+v", p)
	}
	if p := f.search(t, Query{}); p.Limit != DefaultLimit || len(p.Videos) != DefaultLimit || !p.HasMore {
		t.Fatalf("default limit: %d videos, limit %d", len(p.Videos), p.Limit)
	}
	if p := f.search(t, Query{Limit: 1000}); p.Limit != MaxLimit {
		t.Fatalf("limit not clamped: %d", p.Limit)
	}
}

func TestKeywordSearch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prefixed := func(prefix string) []string {
		return catalogtest.ClipKeys(f.Live(func(c fixClip) bool {
			return slices.ContainsFunc(c.Words(), func(w string) bool { return strings.HasPrefix(w, prefix) })
		}))
	}
	cases := []struct {
		search string
		want   []string
	}{
		{"coffee", []string{"coffeeMan", "coffeeWoman"}},
		{"Coffee Kitchen", []string{"coffeeMan"}},
		{"coff", []string{"coffeeMan", "coffeeWoman"}},
		{"laugh", prefixed("laugh")},
		{"laug", prefixed("laug")},
		{"laughing woman", []string{"laughCouch", "carLaugh"}},
		{"lol", []string{"laughCouch"}},          // a tag only
		{"commuting", []string{"carSmile"}},      // a tag, by its stem
		{"coffee -man", []string{"coffeeWoman"}}, // websearch exclusion, no prefix widening
		{`"coffee shop"`, []string{"coffeeWoman"}},
		{"yoga or tears", []string{"yoga", "crying"}},
		{"zebra", nil},
		{"retired joke", nil}, // retired clips never appear
		{"!!! ???", nil},
	}
	for _, tc := range cases {
		p := f.search(t, Query{Search: tc.search, Limit: 100})
		if got := catalogtest.SortedKeys(f.Keys(p.Videos)); !slices.Equal(got, catalogtest.SortedKeys(tc.want)) {
			t.Errorf("search %q: got %v, want %v", tc.search, got, tc.want)
		}
		if p.Total != len(tc.want) {
			t.Errorf("search %q: total %d, want %d", tc.search, p.Total, len(tc.want))
		}
	}
	if len(prefixed("laug")) < 3 {
		t.Fatal("fixture has too few laughing clips")
	}

	// Ranked: a word in the title outweighs the same word in the emotion.
	p := f.search(t, Query{Search: "laughing", Limit: 100})
	if got := f.Keys(p.Videos); len(got) < 3 || !slices.Equal(catalogtest.SortedKeys(got[:2]), []string{"carLaugh", "laughCouch"}) {
		t.Errorf("laughing ranked: %v", got)
	}
	// Filters and sorts apply on top.
	p = f.search(t, Query{Search: "coffee", Gender: "male"})
	if got := f.Keys(p.Videos); !slices.Equal(got, []string{"coffeeMan"}) {
		t.Errorf("coffee + male: %v", got)
	}
	p = f.search(t, Query{Search: "coffee", SortBy: SortPrice, SortOrder: SortAsc})
	if got := f.Keys(p.Videos); !slices.Equal(got, []string{"coffeeWoman", "coffeeMan"}) {
		t.Errorf("coffee by price: %v", got)
	}
	// An empty search is no search.
	if p := f.search(t, Query{Search: "   ", Limit: 100}); p.Total != len(f.Live(nil)) {
		t.Errorf("blank search matched %d", p.Total)
	}
}

func TestSearchOwned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key, other := f.NewKey(t), f.NewKey(t)
	bought := []string{"coffeeMan", "yoga"}
	for _, k := range bought {
		f.Purchase(t, key, f.ByKey[k].ID)
	}
	// A purchase of a clip retired since stays owned but out of search.
	f.Purchase(t, key, f.ByKey["retired"].ID)

	p := f.search(t, Query{Owned: ptr(true), KeyID: key, Limit: 100})
	if got := catalogtest.SortedKeys(f.Keys(p.Videos)); !slices.Equal(got, catalogtest.SortedKeys(bought)) || p.Total != 2 {
		t.Fatalf("owned=true: %v (total %d)", got, p.Total)
	}
	p = f.search(t, Query{Owned: ptr(false), KeyID: key, Limit: 100})
	if p.Total != len(f.Live(nil))-2 || slices.Contains(f.Keys(p.Videos), "coffeeMan") {
		t.Fatalf("owned=false: total %d", p.Total)
	}
	if p := f.search(t, Query{Owned: ptr(true), KeyID: other}); p.Total != 0 {
		t.Fatalf("another key owns %d", p.Total)
	}
	if p := f.search(t, Query{Owned: ptr(true), KeyID: key, Search: "coffee"}); !slices.Equal(f.Keys(p.Videos), []string{"coffeeMan"}) {
		t.Fatalf("owned coffee: %v", f.Keys(p.Videos))
	}
}

func TestSearchUnknownDifficulty(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.svc.Search(f.Ctx, Query{Difficulty: "legendary"}, f.QE)
	ae := requireInvalid(t, err, "difficulty")
	if vals, _ := ae.Fields["allowed_values"].([]string); !slices.Equal(vals, []string{"easy", "medium", "hard"}) {
		t.Fatalf("allowed values %v", ae.Fields["allowed_values"])
	}
	// A tier nobody uses is a valid, empty filter.
	if _, err := f.Cat.SetTier(f.Ctx, "premium", 9900); err != nil {
		t.Fatal(err)
	}
	if p := f.search(t, Query{Difficulty: "premium"}); p.Total != 0 || len(p.Videos) != 0 {
		t.Fatalf("premium: %+v", p)
	}
}
