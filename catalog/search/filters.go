package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/internal/money"
)

// FilterValues are the values the live catalog holds for each filter, with
// how many live clips carry each: what a client can usefully filter by.
type FilterValues struct {
	Emotion     []ValueCount
	Gender      []ValueCount
	AgeRange    []ValueCount
	Location    []ValueCount
	MediaType   []ValueCount
	Orientation []ValueCount
	Difficulty  []TierCount
	Models      []ModelCount
}

// ValueCount is one value of a filter and its number of live clips.
type ValueCount struct {
	Value string
	Count int
}

// TierCount is a difficulty tier in use, its current price and its clips.
type TierCount struct {
	Name  string
	Price money.Cents
	Count int
}

// ModelCount is a creator filmed in live clips. A model's name is taken
// from its clips; should they disagree, the greatest one is shown.
type ModelCount struct {
	ID    string
	Name  string
	Count int
}

// Filters returns the filter values in use. Enum facets keep the order of
// their allowed values, locations and models come most used first, tiers
// cheapest first.
func (s *Service) Filters(ctx context.Context) (FilterValues, error) {
	tiers, err := s.catalog.ListTiers(ctx)
	if err != nil {
		return FilterValues{}, fmt.Errorf("filters: %w", err)
	}
	var counts map[string]map[string]int
	var models []ModelCount
	err = s.catalog.Read(ctx, false, func(db *pgxpool.Pool) error {
		counts, models = map[string]map[string]int{}, nil
		rows, err := db.Query(ctx, sqlFilterValues)
		if err != nil {
			return err
		}
		return collectFilterValues(rows, counts, &models)
	})
	if err != nil {
		return FilterValues{}, fmt.Errorf("filters: %w", err)
	}
	return filterValues(tiers, counts, models), nil
}

// collectFilterValues reads the rows of sqlFilterValues into counts (per
// facet and value) and models.
func collectFilterValues(rows pgx.Rows, counts map[string]map[string]int, models *[]ModelCount) error {
	var facet, name string
	var value *string
	var n int
	_, err := pgx.ForEachRow(rows, []any{&facet, &value, &name, &n}, func() error {
		if value == nil {
			return nil
		}
		if facet == "model" {
			*models = append(*models, ModelCount{ID: *value, Name: name, Count: n})
			return nil
		}
		if counts[facet] == nil {
			counts[facet] = map[string]int{}
		}
		counts[facet][*value] = n
		return nil
	})
	return err
}

// filterValues puts the counted values in the order clients see.
func filterValues(tiers []catalog.Tier, counts map[string]map[string]int, models []ModelCount) FilterValues {
	f := FilterValues{
		Emotion:     inOrder(counts["emotion"], catalog.Emotions()),
		Gender:      inOrder(counts["gender"], catalog.Genders()),
		AgeRange:    inOrder(counts["age_range"], catalog.AgeRanges()),
		Location:    byCount(counts["location"]),
		MediaType:   inOrder(counts["media_type"], catalog.MediaTypes()),
		Orientation: inOrder(counts["orientation"], catalog.Orientations()),
		Difficulty:  []TierCount{},
		Models:      models,
	}
	for _, t := range tiers {
		if c := counts["difficulty"][t.Name]; c > 0 {
			f.Difficulty = append(f.Difficulty, TierCount{Name: t.Name, Price: t.PriceCents, Count: c})
		}
	}
	if f.Models == nil {
		f.Models = []ModelCount{}
	}
	slices.SortFunc(f.Models, func(a, b ModelCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return f
}

// inOrder lists the values present in counts in the order of allowed.
func inOrder(counts map[string]int, allowed []string) []ValueCount {
	out := []ValueCount{}
	for _, v := range allowed {
		if c := counts[v]; c > 0 {
			out = append(out, ValueCount{Value: v, Count: c})
		}
	}
	return out
}

// byCount lists free-form values most used first, then alphabetically.
func byCount(counts map[string]int) []ValueCount {
	out := make([]ValueCount, 0, len(counts))
	for v, c := range counts {
		out = append(out, ValueCount{Value: v, Count: c})
	}
	slices.SortFunc(out, func(a, b ValueCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return out
}
