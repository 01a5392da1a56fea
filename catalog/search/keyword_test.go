package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
)

// walkFixture is a catalog where "sunset" is in many clips, in the title of
// some, the tags of others and the description of the rest, with "beach"
// beside it in a third of them and "zebra" in five: enough matches for a
// ranked keyword search to be served by the walk of video_terms.
type walkFixture struct {
	*catalogtest.Catalog
	svc *Service
}

func newWalkFixture(t *testing.T) walkFixture {
	t.Helper()
	b := catalogtest.New(t, nil)
	if _, err := b.Pool.Exec(b.Ctx, `
		INSERT INTO videos (id, title, description, tags, emotion, gender, difficulty, media_key)
		SELECT gen_random_uuid(),
		       CASE WHEN i % 5 = 0 THEN 'Sunset over the water ' || i ELSE 'Quiet evening ' || i END,
		       CASE WHEN i % 5 = 2 THEN 'a long sunset walk' WHEN i % 50 = 3 THEN 'sunset with a zebra' ELSE 'plain clip' END
		         || CASE WHEN i % 3 = 0 THEN ' on the beach' ELSE '' END,
		       CASE WHEN i % 5 = 1 THEN ARRAY['sunset', 'golden'] ELSE ARRAY['evening'] END,
		       'neutral', CASE WHEN i % 2 = 0 THEN 'female' ELSE 'male' END, 'easy', 'clips/walk/' || i
		FROM generate_series(1, 250) AS i`); err != nil {
		t.Fatal(err)
	}
	return walkFixture{Catalog: b, svc: New(b.Cat)}
}

// ranked is the oracle: every live clip matching the search's words,
// ranked as the catalog ranks them, by a scan of the whole table.
func (f walkFixture) ranked(t *testing.T, search string) []uuid.UUID {
	t.Helper()
	return f.rankedWhere(t, search, "true")
}

// rankedWhere is ranked of the clips that also meet cond, an SQL condition
// on videos written by the test.
func (f walkFixture) rankedWhere(t *testing.T, search, cond string) []uuid.UUID {
	t.Helper()
	rows, err := f.Pool.Query(f.Ctx, `
		SELECT id FROM videos
		WHERE retired_at IS NULL AND search_tsv @@ to_tsquery('english', $2) AND `+cond+`
		ORDER BY ts_rank(search_tsv, websearch_to_tsquery('english', $1) || to_tsquery('english', $2)) DESC, id DESC`,
		search, prefixTSQuery(search))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// walked runs the walk of q alone and says how many candidates it found.
func (f walkFixture) walked(t *testing.T, q Query) int {
	t.Helper()
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	sq := buildSearch(q, nil, "")
	if sq.walk == nil {
		t.Fatalf("search %+v is not served by the walk", q)
	}
	_, n, err := f.svc.collectWalk(f.Pool.Query(f.Ctx, sq.walk.sql, sq.walk.args...))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(vs []catalog.Video) []uuid.UUID {
	out := make([]uuid.UUID, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

func TestKeywordWalk(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	search := func(q Query) Page {
		t.Helper()
		p, err := f.svc.Search(f.Ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	// One word: the walk's first page is the exact best twenty, as a
	// word's impact is its rank.
	all := f.ranked(t, "sunset")
	if len(all) < 100 {
		t.Fatalf("fixture: %d sunset clips", len(all))
	}
	if n := f.walked(t, Query{Search: "sunset"}); n <= DefaultLimit {
		t.Fatalf("walk found %d candidates", n)
	}
	p := search(Query{Search: "sunset"})
	if got := ids(p.Videos); !slices.Equal(got, all[:DefaultLimit]) {
		t.Fatalf("first page:\n got %v\nwant %v", got, all[:DefaultLimit])
	}
	if !p.HasMore || p.NextCursor == "" || p.Total != len(all) {
		t.Fatalf("has_more %v cursor %q total %d (want %d)", p.HasMore, p.NextCursor, p.Total, len(all))
	}

	// Paged by cursor to the end: each clip once, every one a match, in
	// rank order, and every match of the word reached.
	seen := map[uuid.UUID]bool{}
	var order []uuid.UUID
	for cursor, pages := "", 0; ; pages++ {
		if pages > 20 {
			t.Fatal("paging does not end")
		}
		p := search(Query{Search: "sunset", Cursor: cursor, Limit: 25})
		for _, v := range p.Videos {
			if seen[v.ID] {
				t.Fatalf("clip %s shown twice", v.ID)
			}
			seen[v.ID] = true
			order = append(order, v.ID)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if !slices.Equal(order, all) {
		t.Errorf("paged %d clips, want the %d matches in rank order", len(order), len(all))
	}

	// Two words: every result has both, best first.
	both := f.ranked(t, "sunset beach")
	p = search(Query{Search: "sunset beach", Limit: 10})
	if len(p.Videos) != 10 {
		t.Fatalf("sunset beach: %d results", len(p.Videos))
	}
	for i, v := range p.Videos {
		if !slices.Contains(both, v.ID) {
			t.Fatalf("sunset beach: %s does not match", v.ID)
		}
		if i > 0 && slices.Index(both, v.ID) < slices.Index(both, p.Videos[i-1].ID) {
			t.Errorf("sunset beach: result %d out of rank order", i)
		}
	}
	if got := ids(p.Videos)[:3]; !slices.Equal(got, both[:3]) {
		t.Errorf("sunset beach: best three %v, want %v", got, both[:3])
	}

	// A prefix walks the words it begins.
	if got := ids(search(Query{Search: "suns"}).Videos); !slices.Equal(got, all[:DefaultLimit]) {
		t.Errorf("prefix suns: %v", got)
	}

	// Words rare together: the walks find too few and the full-text
	// index answers, with every match.
	if n := f.walked(t, Query{Search: "sunset zebra"}); n > DefaultLimit {
		t.Fatalf("sunset zebra walked %d candidates", n)
	}
	zebra := f.ranked(t, "sunset zebra")
	if got := ids(search(Query{Search: "sunset zebra"}).Videos); len(zebra) < 3 || !slices.Equal(got, zebra) {
		t.Errorf("sunset zebra: %v, want %v", got, zebra)
	}

	// Filters are walked too, each match checked in its row: one word's
	// first page is the exact best twenty that pass, and paging by cursor
	// reaches every one of them in rank order.
	female := f.rankedWhere(t, "sunset", "gender = 'female'")
	if len(female) < 2*DefaultLimit {
		t.Fatalf("fixture: %d female sunset clips", len(female))
	}
	if n := f.walked(t, Query{Search: "sunset", Gender: "female"}); n <= DefaultLimit {
		t.Fatalf("filtered walk found %d candidates", n)
	}
	if got := ids(search(Query{Search: "sunset", Gender: "female"}).Videos); !slices.Equal(got, female[:DefaultLimit]) {
		t.Fatalf("sunset, female: first page\n got %v\nwant %v", got, female[:DefaultLimit])
	}
	order = order[:0]
	for cursor, pages := "", 0; ; pages++ {
		if pages > 20 {
			t.Fatal("paging does not end")
		}
		p := search(Query{Search: "sunset", Gender: "female", Cursor: cursor, Limit: 15})
		order = append(order, ids(p.Videos)...)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if !slices.Equal(order, female) {
		t.Errorf("sunset, female: paged %v\nwant %v", order, female)
	}
	// By offset, two words: every result passes and matches, best first.
	beachFemale := f.rankedWhere(t, "sunset beach", "gender = 'female'")
	p = search(Query{Search: "sunset beach", Gender: "female", Limit: 5, Offset: 5})
	for i, v := range p.Videos {
		if v.Gender != "female" || !slices.Contains(beachFemale, v.ID) {
			t.Fatalf("sunset beach, female: %s (%s) does not pass", v.ID, v.Gender)
		}
		if i > 0 && slices.Index(beachFemale, v.ID) < slices.Index(beachFemale, p.Videos[i-1].ID) {
			t.Errorf("sunset beach, female: result %d out of rank order", i)
		}
	}

	// A filter that few matches pass: the walks find too few and the
	// full-text index answers, with every one of them.
	if _, err := f.Pool.Exec(f.Ctx, `
		UPDATE videos SET emotion = 'happy' WHERE id IN (
			SELECT id FROM videos WHERE search_tsv @@ to_tsquery('english', 'sunset') ORDER BY id LIMIT 4)`); err != nil {
		t.Fatal(err)
	}
	if n := f.walked(t, Query{Search: "sunset", Emotion: "happy"}); n != 4 {
		t.Fatalf("sunset, happy: the walk found %d candidates, want the 4", n)
	}
	happy := f.rankedWhere(t, "sunset", "emotion = 'happy'")
	if got := ids(search(Query{Search: "sunset", Emotion: "happy"}).Videos); len(happy) != 4 || !slices.Equal(got, happy) {
		t.Errorf("sunset, happy: %v, want %v", got, happy)
	}
	// What the key owns is not walked: it is read where purchases are.
	owned := true
	if q := (Query{Search: "sunset", Owned: &owned, KeyID: uuid.New()}); q.Validate() == nil && buildSearch(q, nil, "").walk != nil {
		t.Error("an owned keyword search is walked")
	}
}

// TestKeywordPostingsFollowTheClip checks that video_terms follows a clip's
// words through the import's upsert and its retirement: a clip whose title
// gains the word comes first, and a retired one goes.
func TestKeywordPostingsFollowTheClip(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	media := f.WriteFile(t, "media/full.avi", []byte("RIFF0000AVI "))
	id := uuid.New()
	in := imports.VideoInput{ID: id.String(), Title: "Plain evening scene", Description: "a sunset far away", Emotion: "neutral",
		Gender: "male", Difficulty: "easy", MediaFile: media}
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, f.Pool)
	first := func() uuid.UUID {
		t.Helper()
		p, err := f.svc.Search(f.Ctx, Query{Search: "sunset", Limit: 1}, nil)
		if err != nil || len(p.Videos) != 1 {
			t.Fatalf("search: %v (%d results)", err, len(p.Videos))
		}
		return p.Videos[0].ID
	}
	if first() == id {
		t.Fatal("a description-only clip ranks first")
	}
	// The word now in the title, twice, and in the tags: the best clip.
	in.Title, in.Tags = "Sunset, sunset over the sea", []string{"sunset"}
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, f.Pool)
	if got := first(); got != id {
		t.Fatalf("retitled clip is not first: %s", got)
	}
	var stale int
	if err := f.Pool.QueryRow(f.Ctx, `
		SELECT count(*) FROM video_terms t WHERE t.video_id = $1
		AND NOT EXISTS (SELECT 1 FROM videos v, unnest(v.search_tsv) u
		                WHERE v.id = t.video_id AND u.lexeme = t.lexeme AND t.impact = broll_term_impact(v.search_tsv, u.lexeme)
		                  AND t.doc = v.search_tsv)`,
		id).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("postings left from the old words: %d (%v)", stale, err)
	}
	if _, err := f.Cat.Retire(f.Ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := first(); got == id {
		t.Fatal("retired clip still found")
	}
	// Retired, the clip leaves the walk's postings, and a re-import (which
	// leaves it retired) does not put them back.
	in.Title = "Sunset, sunset, sunset"
	if _, err := f.Imports.ImportVideos(f.Ctx, []imports.VideoInput{in}, f.Src, nil); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.Pool.QueryRow(f.Ctx, `SELECT count(*) FROM video_terms WHERE video_id = $1`, id).Scan(&left); err != nil || left != 0 {
		t.Fatalf("a retired clip keeps %d postings (%v)", left, err)
	}
}

// TestKeywordWalkFromCopies: the walk's ids-only form, its clips taken
// from the node's copies under a catalog version (walkUnder), gives the
// page the full walk gives, clip for clip, with the same ranks (so the
// same cursors) and the same count of candidates, whether the copies are
// there yet or not; and a clip the walk finds that is not live under the
// version (as on a standby behind the primary) hands the page back to the
// full walk.
func TestKeywordWalkFromCopies(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	compare := func(q Query, v string) {
		t.Helper()
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		sq := buildSearch(q, nil, "")
		if sq.walk == nil || sq.walkIDs == nil {
			t.Fatalf("%+v is not walked", q)
		}
		want, wn, err := f.svc.collectWalk(f.Pool.Query(f.Ctx, sq.walk.sql, sq.walk.args...))
		if err != nil {
			t.Fatal(err)
		}
		got, gn, ok, err := f.svc.walkUnder(f.Ctx, f.Pool, *sq.walkIDs, v)
		if err != nil || !ok {
			t.Fatalf("%+v: walkUnder ok %v, %v", q, ok, err)
		}
		if gn != wn || len(got) != len(want) {
			t.Fatalf("%+v: %d rows of %d candidates, want %d of %d", q, len(got), gn, len(want), wn)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i].video, want[i].video) || got[i].key != want[i].key {
				t.Fatalf("%+v: row %d is %s (rank %v), want %s (rank %v)", q, i,
					got[i].video.ID, got[i].key, want[i].video.ID, want[i].key)
			}
		}
	}
	queries := []Query{
		{Search: "sunset"}, {Search: "sunset", Limit: 7, Offset: 30}, {Search: "sunset beach"},
		{Search: "suns"}, {Search: "sunset beach", Limit: 100}, {Search: "sunset zebra"}, {Search: "nothingmatches"},
		{Search: "sunset", Gender: "male"}, {Search: "sunset beach", Gender: "female", Limit: 4, Offset: 3},
	}
	for _, v := range []string{"v1", "v1", "v2"} {
		for _, q := range queries {
			compare(q, v)
		}
	}
	// A page by cursor, from the copies.
	p, err := f.svc.Search(f.Ctx, Query{Search: "sunset", Limit: 9}, nil)
	if err != nil || p.NextCursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, p.NextCursor)
	}
	compare(Query{Search: "sunset", Limit: 9, Cursor: p.NextCursor}, "v1")

	// A posting left for a retired clip: the best match, retired.
	id := p.Videos[0].ID
	if _, err := f.Cat.Retire(f.Ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Pool.Exec(f.Ctx, `
		INSERT INTO video_terms (lexeme, impact, video_id, doc, emotion, gender, media_type, difficulty)
		SELECT 'sunset', 100, id, search_tsv, emotion, gender, media_type, difficulty FROM videos WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	q := Query{Search: "sunset"}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := f.svc.walkUnder(f.Ctx, f.Pool, *buildSearch(q, nil, "").walkIDs, "v3"); ok || err != nil {
		t.Fatalf("a clip not live under the version: ok %v, %v", ok, err)
	}
}

// spreadFilters gives every filtered column of the fixture's clips values,
// each by its own pattern so that they do not move together, NULLs among
// them.
func (f walkFixture) spreadFilters(t *testing.T) {
	t.Helper()
	if _, err := f.Pool.Exec(f.Ctx, `
		WITH n AS (SELECT id, row_number() OVER (ORDER BY id) AS i FROM videos)
		UPDATE videos v SET
		    emotion = CASE WHEN n.i % 17 = 0 THEN 'happy' ELSE v.emotion END,
		    age_range = (ARRAY['18-24', '25-34', '35-44', NULL])[n.i % 4 + 1],
		    location = CASE WHEN n.i % 5 < 3 THEN 'oslo' WHEN n.i % 5 = 3 THEN 'lisbon' END,
		    media_type = CASE WHEN n.i % 11 = 0 THEN 'image' ELSE 'video' END,
		    orientation = (ARRAY['vertical', 'horizontal', 'square'])[n.i % 3 + 1],
		    difficulty = (ARRAY['easy', 'medium', 'hard'])[n.i % 13 % 3 + 1],
		    model_id = CASE WHEN n.i % 3 = 0 THEN 'model-1' WHEN n.i % 3 = 1 THEN 'model-2' END,
		    duration_seconds = CASE WHEN n.i % 11 = 0 THEN NULL ELSE 1 + n.i % 17 END,
		    virality_score = CASE WHEN n.i % 19 = 0 THEN NULL ELSE n.i % 100 END
		FROM n WHERE v.id = n.id`); err != nil {
		t.Fatal(err)
	}
}

// TestKeywordWalkChecksEveryFilter: each filter a search takes, alone and
// two narrow ones together, is checked by the walk in the postings
// (migration 00034), and the first page is exactly the best clips that
// pass, as a scan of videos ranks them; filters many clips pass are
// answered by the walk itself, not the full-text index.
func TestKeywordWalkChecksEveryFilter(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	f.spreadFilters(t)
	dur, vir := 4.0, 30
	maxDur := 12.5
	cases := []struct {
		q      Query
		cond   string
		walked bool // the walk alone fills the page
	}{
		{Query{Search: "sunset", Emotion: "happy"}, "emotion = 'happy'", false},
		{Query{Search: "sunset", Gender: "female"}, "gender = 'female'", true},
		{Query{Search: "sunset", AgeRange: "25-34"}, "age_range = '25-34'", true},
		{Query{Search: "sunset", Location: "oslo"}, "location = 'oslo'", true},
		{Query{Search: "sunset", MediaType: "video"}, "media_type = 'video'", true},
		{Query{Search: "sunset", Orientation: "square"}, "orientation = 'square'", true},
		{Query{Search: "sunset", Difficulty: "medium"}, "difficulty = 'medium'", true},
		{Query{Search: "sunset", ModelID: "model-2"}, "model_id = 'model-2'", true},
		{Query{Search: "sunset", MinDuration: &dur}, "duration_seconds >= 4", true},
		{Query{Search: "sunset", MaxDuration: &maxDur}, "duration_seconds <= 12.5", true},
		{Query{Search: "sunset", MinVirality: &vir}, "virality_score >= 30", true},
		{Query{Search: "sunset beach", Orientation: "vertical", Location: "Oslo"},
			"orientation = 'vertical' AND location = 'oslo'", false},
		{Query{Search: "sunset", Emotion: "happy", Gender: "male"}, "emotion = 'happy' AND gender = 'male'", false},
		{Query{Search: "sunset", Gender: "male", MinDuration: &dur, MinVirality: &vir},
			"gender = 'male' AND duration_seconds >= 4 AND virality_score >= 30", true},
		{Query{Search: "sunset", MinDuration: &dur, MaxDuration: &maxDur, MinVirality: &vir},
			"duration_seconds BETWEEN 4 AND 12.5 AND virality_score >= 30", true},
	}
	for _, c := range cases {
		want := f.rankedWhere(t, c.q.Search, c.cond)
		if len(want) == 0 {
			t.Fatalf("fixture: nothing passes %s", c.cond)
		}
		if n := f.walked(t, c.q); (n > DefaultLimit) != c.walked {
			t.Errorf("%s: the walk found %d candidates", c.cond, n)
		}
		p, err := f.svc.Search(f.Ctx, c.q, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		if got := ids(p.Videos); !slices.Equal(got, want[:min(len(want), DefaultLimit)]) {
			t.Errorf("%s: first page\n got %v\nwant %v", c.cond, got, want[:min(len(want), DefaultLimit)])
		}
	}
}

// TestKeywordPostingsFollowTheFilters: a change of what a search filters
// by, with the clip's words unchanged, reaches the clip's postings at once
// (the update trigger, migration 00034), so a filtered walk sees the clip
// as it is.
func TestKeywordPostingsFollowTheFilters(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	first := f.rankedWhere(t, "sunset", "gender = 'female'")[0]
	inFirstPage := func(q Query) bool {
		t.Helper()
		p, err := f.svc.Search(f.Ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ids(p.Videos), first)
	}
	if !inFirstPage(Query{Search: "sunset", Gender: "female"}) || inFirstPage(Query{Search: "sunset", Gender: "male", Limit: 100}) {
		t.Fatal("fixture: the best female clip is not where it should be")
	}
	if _, err := f.Pool.Exec(f.Ctx, `
		UPDATE videos SET gender = 'male', orientation = 'vertical', age_range = '55+', model_id = 'model-9',
		                  duration_seconds = 3.5, virality_score = 7
		WHERE id = $1`, first); err != nil {
		t.Fatal(err)
	}
	if inFirstPage(Query{Search: "sunset", Gender: "female"}) {
		t.Error("the clip is still found as female")
	}
	low, high := 3.0, 4.0
	vir := 5
	for _, q := range []Query{
		{Search: "sunset", Gender: "male", Orientation: "vertical"},
		{Search: "sunset", AgeRange: "55+"},
		{Search: "sunset", ModelID: "model-9"},
		{Search: "sunset", MinDuration: &low, MaxDuration: &high, MinVirality: &vir},
	} {
		if !inFirstPage(q) {
			t.Errorf("%+v: the changed clip is not found", q)
		}
	}
	var stale int
	if err := f.Pool.QueryRow(f.Ctx, `
		SELECT count(*) FROM video_terms t JOIN videos v ON v.id = t.video_id
		WHERE (t.emotion, t.gender, t.age_range, t.location, t.media_type, t.orientation, t.difficulty, t.model_id,
		       t.duration_seconds, t.virality_score)
		      IS DISTINCT FROM (v.emotion, v.gender, v.age_range, v.location, v.media_type, v.orientation, v.difficulty,
		       v.model_id, v.duration_seconds, v.virality_score)`).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("%d postings differ from their clip (%v)", stale, err)
	}
}

// TestKeywordWalkRandomFilters runs random searches, each with a random
// set of the filters (values nothing has among them), and holds each
// first page to a scan of videos: as many clips as pass, up to the page;
// each one a match that passes, in rank order; for one word (or a
// prefix), exactly the best that pass. A filter checked on a posting
// must agree with the same filter on the clip's row, NULLs included.
func TestKeywordWalkRandomFilters(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	f.spreadFilters(t)
	rng := rand.New(rand.NewPCG(57, 34))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	walked := 0 // searches whose page the walk filled
	for i := 0; i < 150; i++ {
		q := Query{Search: pick("sunset", "suns", "evening", "beach", "golden", "sunset beach", "quiet evening", "sunset golden")}
		var conds []string
		eq := func(field *string, col string, vs ...string) {
			if rng.IntN(6) == 0 {
				*field = pick(vs...)
				conds = append(conds, fmt.Sprintf("%s = '%s'", col, *field))
			}
		}
		eq(&q.Emotion, "emotion", "happy", "neutral", "sad")
		eq(&q.Gender, "gender", "female", "male", "non_binary")
		eq(&q.AgeRange, "age_range", "18-24", "25-34", "35-44", "55+")
		eq(&q.Location, "location", "oslo", "lisbon", "paris")
		eq(&q.MediaType, "media_type", "video", "image")
		eq(&q.Orientation, "orientation", "vertical", "horizontal", "square")
		eq(&q.Difficulty, "difficulty", "easy", "medium", "hard")
		eq(&q.ModelID, "model_id", "model-1", "model-2", "model-3")
		if rng.IntN(8) == 0 {
			d := []float64{1, 5.5, 12}[rng.IntN(3)]
			q.MinDuration = &d
			conds = append(conds, fmt.Sprintf("duration_seconds >= %v", d))
		}
		if rng.IntN(8) == 0 {
			d := []float64{3, 9, 20}[rng.IntN(3)]
			if q.MinDuration != nil {
				d = max(d, *q.MinDuration)
			}
			q.MaxDuration = &d
			conds = append(conds, fmt.Sprintf("duration_seconds <= %v", d))
		}
		if rng.IntN(8) == 0 {
			v := []int{0, 50, 90}[rng.IntN(3)]
			q.MinVirality = &v
			conds = append(conds, fmt.Sprintf("virality_score >= %d", v))
		}
		cond := "true"
		if len(conds) > 0 {
			cond = strings.Join(conds, " AND ")
		}
		want := f.rankedWhere(t, q.Search, cond)
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		if f.walked(t, q) > DefaultLimit {
			walked++
		}
		p, err := f.svc.Search(f.Ctx, q, nil)
		if err != nil {
			t.Fatalf("%q where %s: %v", q.Search, cond, err)
		}
		got := ids(p.Videos)
		if len(got) != min(len(want), DefaultLimit) {
			t.Fatalf("%q where %s: %d results, %d pass", q.Search, cond, len(got), len(want))
		}
		if !strings.Contains(q.Search, " ") {
			if !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("%q where %s: first page\n got %v\nwant %v", q.Search, cond, got, want[:len(got)])
			}
			continue
		}
		for j, id := range got {
			k := slices.Index(want, id)
			if k < 0 || (j > 0 && k < slices.Index(want, got[j-1])) {
				t.Fatalf("%q where %s: result %d (%s) does not pass or is out of rank order", q.Search, cond, j, id)
			}
		}
	}
	if walked < 30 {
		t.Errorf("only %d of the searches were walked", walked)
	}
	t.Logf("%d of 150 searches walked", walked)
}

// TestKeywordPostingsLeaveWithTheClip: a clip deleted from videos (by an
// operator; the service retires clips, it never deletes them) takes its
// postings with it, so no walk finds a posting without a clip.
func TestKeywordPostingsLeaveWithTheClip(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	var id uuid.UUID
	if err := f.Pool.QueryRow(f.Ctx, `
		DELETE FROM videos WHERE id = (SELECT id FROM videos WHERE title LIKE 'Sunset over the water%' ORDER BY id LIMIT 1)
		RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.Pool.QueryRow(f.Ctx, `SELECT count(*) FROM video_terms WHERE video_id = $1`, id).Scan(&left); err != nil || left != 0 {
		t.Errorf("a deleted clip leaves %d postings (%v)", left, err)
	}
	want := f.ranked(t, "sunset")
	for _, q := range []Query{{Search: "sunset", Limit: 100}, {Search: "sunset water", Limit: 100}, {Search: "sunset", Gender: "female", Limit: 100}} {
		p, err := f.svc.Search(f.Ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q.Search, err)
		}
		if slices.Contains(ids(p.Videos), id) {
			t.Fatalf("%s: the deleted clip is found", q.Search)
		}
		if q.Gender == "" && q.Search == "sunset" && !slices.Equal(ids(p.Videos), want[:q.Limit]) {
			t.Errorf("%s: %d clips, not the best %d of the %d that match", q.Search, len(p.Videos), q.Limit, len(want))
		}
	}
	if slices.Contains(want, id) {
		t.Fatal("the oracle finds the deleted clip")
	}
}
