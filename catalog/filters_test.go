package catalog

import (
	"cmp"
	"reflect"
	"slices"
	"testing"
)

func TestFilterValues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A tier nobody uses is not a filter value.
	if _, err := f.svc.SetTier(f.ctx, "premium", 9900); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Filters(f.ctx)
	if err != nil {
		t.Fatal(err)
	}

	count := func(field func(c fixClip) string, order []string) []ValueCount {
		n := map[string]int{}
		for _, c := range f.live(nil) {
			if v := field(c); v != "" {
				n[v]++
			}
		}
		if order == nil {
			return byCount(n)
		}
		return inOrder(n, order)
	}
	mediaType := func(c fixClip) string { return cmp.Or(c.in.MediaType, "video") }
	want := FilterValues{
		Emotion:     count(func(c fixClip) string { return c.in.Emotion }, Emotions()),
		Gender:      count(func(c fixClip) string { return c.in.Gender }, Genders()),
		AgeRange:    count(func(c fixClip) string { return c.in.AgeRange }, AgeRanges()),
		Location:    count(func(c fixClip) string { return c.in.Location }, nil),
		MediaType:   count(mediaType, MediaTypes()),
		Orientation: count(func(c fixClip) string { return c.in.Orientation }, Orientations()),
	}
	tiers := count(func(c fixClip) string { return c.in.Difficulty }, []string{"easy", "medium", "hard"})
	for _, tc := range tiers {
		want.Difficulty = append(want.Difficulty, TierCount{Name: tc.Value, Price: tierPrice(tc.Value), Count: tc.Count})
	}
	models := map[string]int{}
	for _, c := range f.live(nil) {
		if c.in.Model != nil {
			models[c.in.Model.ID]++
		}
	}
	want.Models = []ModelCount{{ID: "m-ava", Name: "Ava Stone", Count: models["m-ava"]}, {ID: "m-bea", Name: "Bea Cruz", Count: models["m-bea"]}}
	slices.SortFunc(want.Models, func(a, b ModelCount) int { return cmp.Compare(b.Count, a.Count) })

	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// The retired clip (laughing, at home, 25-34) is not counted.
	if got.Emotion[slices.IndexFunc(got.Emotion, func(v ValueCount) bool { return v.Value == "laughing" })].Count !=
		len(f.live(func(c fixClip) bool { return c.in.Emotion == "laughing" })) {
		t.Fatal("retired clip counted")
	}
}

func TestFilterValuesOfAnEmptyCatalog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.svc.Filters(b.ctx)
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
