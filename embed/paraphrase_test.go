package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// The paraphrase set (testdata/paraphrase, see its README) asks for clips of
// the demo catalog in words that none of the wanted clips uses, so only an
// embedder that knows what words mean can rank them first.

// paraphraseFloor and activitiesFloor are the mean nDCG@10 the built-in
// embedder must reach on queries.json and activities.json
// (docs/performance.md has the measured figures). heldoutFloor holds
// heldout.json, queries written before the lexicon was last tuned and never
// tuned against, which shows whether a gain on the other two generalises;
// heldout2Floor holds heldout2.json, a second such set written before the
// round of tuning that followed builtin-lexical-v4. heldout3Floor holds
// heldout3.json, written blind after that round (its writer saw neither
// the embedder nor a score, and used no word of the other query sets).
// heldout4Floor and heldout5Floor hold heldout4.json and heldout5.json,
// written blind while builtin-lexical-v6 was made, by someone who saw
// neither the embedder nor a score, and never read by its author: the
// figures no part of v6 could have been fitted to.
const (
	paraphraseFloor = 0.82
	activitiesFloor = 0.43
	heldoutFloor    = 0.86
	heldout2Floor   = 0.81
	heldout3Floor   = 0.568
	heldout4Floor   = 0.50
	heldout5Floor   = 0.30
)

type paraphraseClip struct {
	ID       string `json:"id"`
	Emotion  string `json:"emotion"`
	Gender   string `json:"gender"`
	Age      string `json:"age"`
	Location string `json:"location"`
	Activity string `json:"activity"`
	Text     string `json:"text"`
}

// facet returns the clip's value of a facet name used in queries.json.
func (c paraphraseClip) facet(name string) (string, bool) {
	switch name {
	case "emotion":
		return c.Emotion, true
	case "gender":
		return c.Gender, true
	case "age":
		return c.Age, true
	case "location":
		return c.Location, true
	case "activity":
		return c.Activity, true
	}
	return "", false
}

type paraphraseQuery struct {
	Query string `json:"query"`
	// Facets are "name=value" (value may list alternatives split by |); the
	// first is what the query is mostly about.
	Facets []string `json:"facets"`
}

// grades judges every clip for q: 2 when it has every facet of the query,
// 1 when it has the first but not all (a smiling woman is a fair answer to
// "beaming fellow", a scowling man is not), 0 otherwise.
func (q paraphraseQuery) grades(t *testing.T, clips []paraphraseClip) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, c := range clips {
		matched := 0
		first := false
		for i, f := range q.Facets {
			name, values, ok := strings.Cut(f, "=")
			got, known := c.facet(name)
			if !ok || !known {
				t.Fatalf("%q: bad facet %q", q.Query, f)
			}
			if slices.Contains(strings.Split(values, "|"), got) {
				matched++
				first = first || i == 0
			}
		}
		switch {
		case matched == len(q.Facets):
			out[c.ID] = 2
		case first:
			out[c.ID] = 1
		}
	}
	return out
}

// loadParaphraseSet reads the catalog and the queries of one file
// (queries.json or activities.json).
func loadParaphraseSet(t *testing.T, queryFile string) ([]paraphraseClip, []paraphraseQuery) {
	t.Helper()
	var clips []paraphraseClip
	var queries []paraphraseQuery
	for path, into := range map[string]any{
		"testdata/paraphrase/catalog.json": &clips,
		"testdata/paraphrase/" + queryFile: &queries,
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return clips, queries
}

// functionWords may appear in a query and its clips alike: they say nothing
// about what is in the shot.
var functionWords = strings.Fields(`a an the and or of at on in into to from with for by as
is are up down out over under after before her his their them someone right`)

func TestParaphraseSetSharesNoWords(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"queries.json", "activities.json", "heldout.json", "heldout2.json", "heldout3.json", "heldout4.json", "heldout5.json"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			checkSharesNoWords(t, file)
		})
	}
}

// checkSharesNoWords fails for a query that shares a word (or a stem) with
// a clip it wants, or that no clip fully answers.
func checkSharesNoWords(t *testing.T, file string) {
	clips, queries := loadParaphraseSet(t, file)
	seen := map[string]bool{}
	for _, q := range queries {
		if seen[q.Query] {
			t.Errorf("%q listed twice", q.Query)
		}
		seen[q.Query] = true
		grades := q.grades(t, clips)
		full := 0
		for _, c := range clips {
			if grades[c.ID] == 0 {
				continue
			}
			full += grades[c.ID] / 2
			words := map[string]bool{}
			for _, w := range tokenize(c.Text) {
				words[w], words[stem(w)] = true, true
			}
			for _, w := range tokenize(q.Query) {
				if !slices.Contains(functionWords, w) && (words[w] || words[stem(w)]) {
					t.Errorf("%q: %q is in %s (%s)", q.Query, w, c.ID, c.Text)
				}
			}
		}
		if full == 0 {
			t.Errorf("%q: no clip has every facet %v", q.Query, q.Facets)
		}
	}
}

// TestParaphraseRelevance holds the built-in embedder to its figures on
// both query sets: who, mood, age and place said in other words
// (queries.json, at least paraphraseFloor), and what people do said in
// other words (activities.json, where idioms and associations such as
// "pumping iron" or "checking the inbox" need knowledge a lexicon lacks:
// held at activitiesFloor so that it cannot fall back unnoticed).
func TestParaphraseRelevance(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	for file, floor := range map[string]float64{"queries.json": paraphraseFloor, "activities.json": activitiesFloor, "heldout.json": heldoutFloor, "heldout2.json": heldout2Floor, "heldout3.json": heldout3Floor, "heldout4.json": heldout4Floor, "heldout5.json": heldout5Floor} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			clips, queries := loadParaphraseSet(t, file)
			if file == "queries.json" && len(queries) < 50 {
				t.Fatalf("%d queries, want at least 50", len(queries))
			}
			score := paraphraseNDCG(t, b, clips, queries)
			t.Logf("%s on %s: mean nDCG@10 %.3f over %d queries", b.Model(), file, score, len(queries))
			if score < floor {
				t.Errorf("mean nDCG@10 %.3f, want at least %.2f", score, floor)
			}
		})
	}
}

// paraphraseNDCG ranks every clip for every query by cosine similarity and
// returns the mean nDCG@10 (gain 2^grade-1, ties broken by clip id so the
// figure is reproducible). Queries are logged worst first.
func paraphraseNDCG(t *testing.T, e Embedder, clips []paraphraseClip, queries []paraphraseQuery) float64 {
	t.Helper()
	texts := make([]string, len(clips))
	for i, c := range clips {
		texts[i] = c.Text
	}
	docs, err := e.Embed(context.Background(), Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		query string
		ndcg  float64
		top   []string
	}
	var results []result
	var sum float64
	for _, q := range queries {
		grades := q.grades(t, clips)
		qv := embedOne(t, e, Query, q.Query)
		order := make([]int, len(clips))
		sims := make([]float64, len(clips))
		for i := range clips {
			order[i], sims[i] = i, cosine(qv, docs[i])
		}
		slices.SortFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(sims[b], sims[a]), cmp.Compare(clips[a].ID, clips[b].ID))
		})
		ideal := make([]int, 0, len(grades))
		for _, g := range grades {
			ideal = append(ideal, g)
		}
		slices.Sort(ideal)
		slices.Reverse(ideal)
		var dcg, idcg float64
		var top []string
		for r := range 10 {
			g := grades[clips[order[r]].ID]
			dcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(r+2))
			if r < len(ideal) {
				idcg += (math.Pow(2, float64(ideal[r])) - 1) / math.Log2(float64(r+2))
			}
			if r < 3 {
				top = append(top, clips[order[r]].ID+"="+string(rune('0'+g)))
			}
		}
		results = append(results, result{q.Query, dcg / idcg, top})
		sum += dcg / idcg
	}
	slices.SortStableFunc(results, func(a, b result) int { return cmp.Compare(a.ndcg, b.ndcg) })
	for _, r := range results {
		t.Logf("%.3f  %-50q top %v", r.ndcg, r.query, r.top)
	}
	return sum / float64(len(queries))
}
