package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog"
	"broll/catalog/catalogtest"
	"broll/catalog/imports"
	"broll/clients/go/brollclient"
	"broll/embed"
)

// similarCatalog is a catalog for "more like this": clips embedded with the
// built-in embedder (the test nodes' model), each with its vector kept so
// that the expected neighbours are computed here, not by SQL; and one clip
// in each state that has no neighbours to offer.
type similarCatalog struct {
	vectors map[uuid.UUID][]float32
	emotion map[uuid.UUID]string
	// live are the clips on sale with a vector of the current model.
	live []uuid.UUID
	// pending has no vector yet; otherModel's vector is another model's;
	// retired and unsound (media never passed the probe) are off sale,
	// with vectors of the current model.
	pending, otherModel, retired, unsound uuid.UUID
}

func seedSimilar(t *testing.T, e *testEnv) similarCatalog {
	t.Helper()
	ctx := context.Background()
	full, preview, thumb := e.clipFiles(t)
	subjects := []string{"Woman", "Man", "Teenager", "Couple", "Grandmother"}
	actions := []struct{ what, emotion string }{
		{"laughing in a car", "laughing"}, {"drinking coffee in the kitchen", "neutral"},
		{"laughing at a phone on the couch", "laughing"}, {"shouting on the street", "angry"},
		{"crying in the bedroom", "sad"}, {"unboxing a package at home", "surprised"},
	}
	var clips []imports.VideoInput
	for i, s := range subjects {
		for j, a := range actions {
			clips = append(clips, imports.VideoInput{ID: uuid.NewString(), Title: s + " " + a.what, Emotion: a.emotion,
				Gender: catalog.Genders()[(i+j)%3], Difficulty: []string{"easy", "medium", "hard"}[(i+j)%3],
				MediaFile: full, PreviewFile: preview, ThumbnailFile: thumb, DurationSeconds: ptrTo(float64(5 + i + j))})
		}
	}
	if _, err := e.ctl.Imports.ImportVideos(ctx, clips, "", nil); err != nil {
		t.Fatal(err)
	}
	sc := similarCatalog{vectors: map[uuid.UUID][]float32{}, emotion: map[uuid.UUID]string{}}
	var all, sound []uuid.UUID
	for i, c := range clips {
		id := uuid.MustParse(c.ID)
		all, sc.emotion[id] = append(all, id), c.Emotion
		if i != 1 { // clip 1's media never passes the probe
			sound = append(sound, id)
		}
	}
	catalogtest.MediaPassed(t, e.pool, sound...)
	sc.unsound, sc.pending, sc.otherModel, sc.retired = all[1], all[2], all[3], all[4]

	builtin := embed.NewBuiltin()
	inputs, err := e.ctl.Catalog.EmbeddingInputs(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	var current, other []catalog.Embedding
	for _, in := range inputs {
		if in.ID == sc.pending {
			continue
		}
		v, err := builtin.Embed(ctx, embed.Document, []string{in.Text})
		if err != nil {
			t.Fatal(err)
		}
		sc.vectors[in.ID] = v[0]
		if in.ID == sc.otherModel {
			other = append(other, catalog.Embedding{ID: in.ID, Vector: v[0]})
		} else {
			current = append(current, catalog.Embedding{ID: in.ID, Vector: v[0]})
		}
	}
	if err := e.ctl.Catalog.StoreEmbeddings(ctx, builtin.Model(), current); err != nil {
		t.Fatal(err)
	}
	if err := e.ctl.Catalog.StoreEmbeddings(ctx, "another-model", other); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ctl.Catalog.Retire(ctx, sc.retired); err != nil {
		t.Fatal(err)
	}
	for _, id := range all {
		if id != sc.unsound && id != sc.pending && id != sc.otherModel && id != sc.retired {
			sc.live = append(sc.live, id)
		}
	}
	return sc
}

// cosine is the similarity of two vectors, computed here.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// neighbours are the live clips but id that keep passes, nearest first.
func (sc similarCatalog) neighbours(id uuid.UUID, keep func(uuid.UUID) bool) []uuid.UUID {
	var out []uuid.UUID
	for _, n := range sc.live {
		if n != id && (keep == nil || keep(n)) {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b uuid.UUID) int {
		sa, sb := cosine(sc.vectors[id], sc.vectors[a]), cosine(sc.vectors[id], sc.vectors[b])
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return out
}

func videoIDs(l brollclient.VideoList) []uuid.UUID {
	out := make([]uuid.UUID, len(l.Videos))
	for i, v := range l.Videos {
		out[i] = v.Id
	}
	return out
}

// checkNeighbours holds a page of similar clips to what is computed here:
// the same clips, each with its own similarity, best first.
func (sc similarCatalog) checkNeighbours(t *testing.T, of uuid.UUID, got brollclient.VideoList, want []uuid.UUID) {
	t.Helper()
	if len(got.Videos) != len(want) {
		t.Fatalf("%d neighbours, want %d", len(got.Videos), len(want))
	}
	for i, v := range got.Videos {
		if v.Id == of {
			t.Fatal("the clip is its own neighbour")
		}
		if v.Similarity == nil {
			t.Fatalf("%s has no similarity", v.Title)
		}
		if exact := cosine(sc.vectors[of], sc.vectors[v.Id]); math.Abs(*v.Similarity-exact) > 1e-4 {
			t.Fatalf("%s: similarity %v, computed %v", v.Title, *v.Similarity, exact)
		}
		if i > 0 && *got.Videos[i-1].Similarity < *v.Similarity {
			t.Fatalf("not best first at %d: %v < %v", i, *got.Videos[i-1].Similarity, *v.Similarity)
		}
		// Near-ties may come in either order; the clip at each rank is
		// as near as the one computed for it.
		if exact := cosine(sc.vectors[of], sc.vectors[want[i]]); math.Abs(*v.Similarity-exact) > 1e-4 {
			t.Fatalf("rank %d: %s (%v), want %s (%v)", i, v.Id, *v.Similarity, want[i], exact)
		}
	}
}

func TestSimilarBrollOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	sc := seedSimilar(t, e)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	clip := sc.live[0] // "Woman laughing in a car"
	path := func(id uuid.UUID, query string) string {
		return "/api/v1/broll/" + id.String() + "/similar?" + query
	}
	similar := func(t *testing.T, key string, id uuid.UUID, query string) brollclient.VideoList {
		t.Helper()
		return expect[brollclient.VideoList](t, e.do(t, 0, "GET", path(id, query), key, nil), 200)
	}

	t.Run("nearest first, with similarity, the clip itself left out", func(t *testing.T) {
		got := similar(t, cust.Secret, clip, "limit=100")
		want := sc.neighbours(clip, nil)
		sc.checkNeighbours(t, clip, got, want)
		if pg := got.Pagination; pg.Total != len(want) || !pg.TotalExact || pg.HasMore || pg.NextCursor != nil {
			t.Fatalf("pagination: %+v", pg)
		}
		for _, off := range []uuid.UUID{sc.pending, sc.otherModel, sc.retired, sc.unsound} {
			if slices.Contains(videoIDs(got), off) {
				t.Fatalf("%s is not on sale with a current vector, yet it is a neighbour", off)
			}
		}
		if !strings.HasSuffix(got.Videos[0].Title, " laughing in a car") {
			t.Errorf("nearest to %q: %q", "Woman laughing in a car", got.Videos[0].Title)
		}
	})

	t.Run("filters apply on top and still fill the page", func(t *testing.T) {
		laughing := func(id uuid.UUID) bool { return sc.emotion[id] == "laughing" }
		want := sc.neighbours(clip, laughing)
		got := similar(t, cust.Secret, clip, "emotion=laughing&limit=4")
		sc.checkNeighbours(t, clip, got, want[:4])
		if pg := got.Pagination; pg.Total != len(want) || !pg.HasMore || len(want) <= 4 {
			t.Fatalf("pagination %+v of %d laughing neighbours", pg, len(want))
		}
		for _, v := range got.Videos {
			if v.Emotion != "laughing" {
				t.Fatalf("filter ignored: %s is %s", v.Title, v.Emotion)
			}
		}
		if got := similar(t, cust.Secret, clip, "emotion=angry&max_duration=9"); len(got.Videos) != 1 ||
			got.Videos[0].Title != "Man shouting on the street" {
			t.Fatalf("two filters: %+v", videoTitles(got))
		}
	})

	t.Run("next_cursor walks every neighbour once", func(t *testing.T) {
		var walked []uuid.UUID
		q := "limit=4"
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("the cursor does not end")
			}
			p := similar(t, cust.Secret, clip, q)
			walked = append(walked, videoIDs(p)...)
			if p.Pagination.NextCursor == nil {
				break
			}
			q = "limit=4&cursor=" + url.QueryEscape(*p.Pagination.NextCursor)
		}
		all := videoIDs(similar(t, cust.Secret, clip, "limit=100"))
		if !slices.Equal(walked, all) {
			t.Fatalf("by cursor %d clips, in one page %d", len(walked), len(all))
		}
		// A cursor is the query's own: another clip's neighbours refuse it.
		first := similar(t, cust.Secret, clip, "limit=2")
		r := e.do(t, 0, "GET", path(sc.live[1], "limit=2&cursor="+url.QueryEscape(*first.Pagination.NextCursor)), cust.Secret, nil)
		if p := problemOf(t, r); r.status != 400 || deref(p.Field) != "cursor" {
			t.Fatalf("another clip's cursor: %d %s", r.status, r.raw)
		}
	})

	t.Run("sort_by orders the neighbours otherwise, similarity stays", func(t *testing.T) {
		got := similar(t, cust.Secret, clip, "sort_by=duration_seconds&sort_order=asc&limit=100")
		if len(got.Videos) != len(sc.live)-1 {
			t.Fatalf("%d clips", len(got.Videos))
		}
		for i, v := range got.Videos {
			if v.Similarity == nil || v.Id == clip {
				t.Fatalf("%+v", v)
			}
			if i > 0 && *got.Videos[i-1].DurationSeconds > *v.DurationSeconds {
				t.Fatalf("not by duration at %d", i)
			}
		}
	})

	t.Run("owned is the calling key's", func(t *testing.T) {
		mine := sc.neighbours(clip, nil)[2]
		e.buy(t, 0, cust.Secret, mine)
		for _, v := range similar(t, cust.Secret, clip, "limit=100").Videos {
			if owned := v.Id == mine; v.Owned != owned || (v.DownloadUrl != nil) != owned {
				t.Fatalf("%s: owned %v, download_url %v", v.Title, v.Owned, v.DownloadUrl)
			}
		}
		if got := videoIDs(similar(t, cust.Secret, clip, "owned=true")); !slices.Equal(got, []uuid.UUID{mine}) {
			t.Fatalf("owned=true: %v", got)
		}
		if got := similar(t, acct.RootKey.Secret, clip, "owned=true"); len(got.Videos) != 0 {
			t.Fatalf("the root key did not buy it: %v", videoTitles(got))
		}
	})

	t.Run("clips that have no neighbours to offer", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			path   string
			status int
			code   string
			field  string
		}{
			{"unknown", path(uuid.New(), ""), 404, "not_found", ""},
			{"the nil UUID", path(uuid.Nil, ""), 404, "not_found", ""},
			{"retired", path(sc.retired, ""), 404, "not_found", ""},
			{"media not sound", path(sc.unsound, ""), 404, "not_found", ""},
			{"not a UUID", "/api/v1/broll/not-a-uuid/similar", 400, "invalid_request", "id"},
			{"search", path(clip, "search=car"), 400, "invalid_request", "search"},
			{"semantic_search", path(clip, "semantic_search=car"), 400, "invalid_request", "semantic_search"},
			{"bad filter", path(clip, "emotion=furious"), 400, "invalid_request", "emotion"},
			{"bad limit", path(clip, "limit=0"), 400, "invalid_request", "limit"},
			{"vector pending", path(sc.pending, ""), 409, "not_embedded", ""},
			{"vector of another model", path(sc.otherModel, ""), 409, "not_embedded", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.do(t, 0, "GET", c.path, cust.Secret, nil)
				p := problemOf(t, r)
				if r.status != c.status || string(p.Code) != c.code || deref(p.Field) != c.field {
					t.Fatalf("%d %s", r.status, r.raw)
				}
				if retry := r.header.Get("Retry-After"); c.status == 409 {
					if n, err := strconv.Atoi(retry); err != nil || n < 1 {
						t.Fatalf("Retry-After %q", retry)
					}
					if p.Type != e.cfg.BaseURL()+"/docs/errors/not_embedded" {
						t.Fatalf("type %s", p.Type)
					}
				}
			})
		}
	})

	t.Run("needs broll:read", func(t *testing.T) {
		billingOnly := acct.CustomerKey(t, e.pool, "billing only", "broll:billing")
		r := e.do(t, 0, "GET", path(clip, ""), billingOnly.Secret, nil)
		if p := problemOf(t, r); r.status != 403 || p.Code != "insufficient_scope" {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		if r := e.do(t, 0, "GET", path(clip, ""), "", nil); r.status != 401 {
			t.Fatalf("no key: %d", r.status)
		}
	})

	t.Run("find_similar_videos answers as the route does", func(t *testing.T) {
		base := e.serveLoopback(t)
		cs := mcpMustConnect(t, base, cust.Secret)
		for _, q := range []struct {
			args  map[string]any
			query string
		}{
			{map[string]any{"video_id": clip.String()}, ""},
			{map[string]any{"video_id": clip.String(), "emotion": "laughing", "limit": 3}, "emotion=laughing&limit=3"},
			{map[string]any{"video_id": clip.String(), "owned": true}, "owned=true"},
		} {
			out := callToolOK(t, cs, "find_similar_videos", q.args)
			r := e.do(t, 0, "GET", path(clip, q.query), cust.Secret, nil)
			var got, want any
			if json.Unmarshal(out.raw, &got) != nil || json.Unmarshal(r.raw, &want) != nil || r.status != 200 || !reflect.DeepEqual(withoutLinkTimes(got), withoutLinkTimes(want)) {
				t.Fatalf("%v over MCP differs from REST %d:\nmcp  %s\nrest %s", q.args, r.status, out.raw, r.raw)
			}
		}
		// The cursor of one call continues in the next.
		first := decode[brollclient.VideoList](t, callToolOK(t, cs, "find_similar_videos", map[string]any{"video_id": clip.String(), "limit": 5}))
		next := decode[brollclient.VideoList](t, callToolOK(t, cs, "find_similar_videos",
			map[string]any{"video_id": clip.String(), "limit": 5, "cursor": *first.Pagination.NextCursor}))
		if len(next.Videos) != 5 {
			t.Fatalf("second page %v", videoTitles(next))
		}
		if slices.ContainsFunc(next.Videos, func(v brollclient.Video) bool { return slices.Contains(videoIDs(first), v.Id) }) {
			t.Fatal("the second page repeats the first")
		}

		pending := callToolErr(t, cs, "find_similar_videos", map[string]any{"video_id": sc.pending.String()}, "not_embedded")
		if !*pending.Retryable {
			t.Errorf("not_embedded is worth a retry: %+v", pending)
		}
		callToolErr(t, cs, "find_similar_videos", map[string]any{"video_id": sc.retired.String()}, "not_found")
		callToolErr(t, cs, "find_similar_videos", map[string]any{"video_id": uuid.Nil.String()}, "not_found")
		if bad := callToolErr(t, cs, "find_similar_videos", map[string]any{"video_id": "a title"}, "invalid_request"); deref(bad.Field) != "video_id" {
			t.Errorf("field %v", bad.Field)
		}
		callToolErr(t, cs, "find_similar_videos", map[string]any{"video_id": clip.String(), "search": "car"}, "invalid_request")

		billingOnly := mcpMustConnect(t, base, acct.CustomerKey(t, e.pool, "mcp billing", "broll:billing").Secret)
		callToolErr(t, billingOnly, "find_similar_videos", map[string]any{"video_id": clip.String()}, "insufficient_scope")
	})

	t.Run("answers match the OpenAPI document", func(t *testing.T) {
		_, router := loadOpenAPI(t)
		for _, c := range []struct {
			path   string
			status int
		}{
			{path(clip, "limit=3&emotion=laughing"), 200},
			{path(sc.pending, ""), 409},
			{path(sc.retired, ""), 404},
			{path(clip, "search=car"), 400},
		} {
			x := e.exchange(t, 0, fmt.Sprintf("similar %d", c.status), "GET", c.path, bearerHeader(cust.Secret), nil)
			validate(t, router, x, c.status)
		}
	})
}
