package search

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"broll/catalog"
	"broll/catalog/catalogtest"
)

func TestFilterValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A tier nobody uses is not a filter value.
	if _, err := f.Cat.SetTier(f.Ctx, "premium", 9900); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Filters(f.Ctx)
	if err != nil {
		t.Fatal(err)
	}

	count := func(field func(c fixClip) string, order []string) []ValueCount {
		n := map[string]int{}
		for _, c := range f.Live(nil) {
			if v := field(c); v != "" {
				n[v]++
			}
		}
		if order == nil {
			return byCount(n)
		}
		return inOrder(n, order)
	}
	mediaType := func(c fixClip) string { return cmp.Or(c.In.MediaType, "video") }
	want := FilterValues{
		Emotion:     count(func(c fixClip) string { return c.In.Emotion }, catalog.Emotions()),
		Gender:      count(func(c fixClip) string { return c.In.Gender }, catalog.Genders()),
		AgeRange:    count(func(c fixClip) string { return c.In.AgeRange }, catalog.AgeRanges()),
		Location:    count(func(c fixClip) string { return c.In.Location }, nil),
		MediaType:   count(mediaType, catalog.MediaTypes()),
		Orientation: count(func(c fixClip) string { return c.In.Orientation }, catalog.Orientations()),
	}
	tiers := count(func(c fixClip) string { return c.In.Difficulty }, []string{"easy", "medium", "hard"})
	for _, tc := range tiers {
		want.Difficulty = append(want.Difficulty, TierCount{Name: tc.Value, Price: catalogtest.TierPrice(tc.Value), Count: tc.Count})
	}
	models := map[string]int{}
	for _, c := range f.Live(nil) {
		if c.In.Model != nil {
			models[c.In.Model.ID]++
		}
	}
	want.Models = []ModelCount{{ID: "m-ava", Name: "Ava Stone", Count: models["m-ava"]}, {ID: "m-bea", Name: "Bea Cruz", Count: models["m-bea"]}}
	slices.SortFunc(want.Models, func(a, b ModelCount) int { return cmp.Compare(b.Count, a.Count) })

	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// The retired clip (laughing, at home, 25-34) is not counted.
	if got.Emotion[slices.IndexFunc(got.Emotion, func(v ValueCount) bool { return v.Value == "laughing" })].Count !=
		len(f.Live(func(c fixClip) bool { return c.In.Emotion == "laughing" })) {
		t.Fatal("retired clip counted")
	}
}

func TestFilterValuesOfAnEmptyCatalog(t *testing.T) {
	t.Parallel()
	b := catalogtest.New(t, nil)
	got, err := New(b.Cat).Filters(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, vals := range map[string]int{"emotion": len(got.Emotion), "location": len(got.Location),
		"difficulty": len(got.Difficulty), "models": len(got.Models)} {
		if vals != 0 {
			t.Errorf("%s has %d values", name, vals)
		}
	}
	if got.Emotion == nil || got.Location == nil || got.Difficulty == nil || got.Models == nil {
		t.Error("empty facets must be empty lists, not null")
	}
}
