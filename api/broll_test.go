package api

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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

// clipFiles writes a clip's three files into the import directory.
func (e *testEnv) clipFiles(t *testing.T) (full, preview, thumb string) {
	t.Helper()
	dir := e.cfg.ImportDir
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("full.avi", "RIFF-full"), write("preview.gif", "GIF89a-preview"), write("thumb.jpg", "\xff\xd8\xff-thumb")
}

// seedCatalog imports a few clips through the catalog and embeds them with
// the built-in embedder (the one the test nodes search with). It returns
// the clip ids by title.
func seedCatalog(t *testing.T, e *testEnv) map[string]uuid.UUID {
	t.Helper()
	ctx := context.Background()
	full, preview, thumb := e.clipFiles(t)
	clip := func(title, emotion, gender, difficulty string, tags ...string) imports.VideoInput {
		return imports.VideoInput{ID: uuid.NewString(), Title: title, Emotion: emotion, Gender: gender,
			Difficulty: difficulty, Tags: tags, MediaFile: full, PreviewFile: preview, ThumbnailFile: thumb,
			Location: "home", Orientation: "vertical", DurationSeconds: ptrTo(12.0), Width: ptrTo(1080),
			Height: ptrTo(1920), FPS: ptrTo(30.0), ViralityScore: ptrTo(70),
			Model: &catalog.VideoModel{ID: "m-1", Name: "Ava"}}
	}
	clips := []imports.VideoInput{
		clip("Woman laughing in a car", "laughing", "female", "easy", "car"),
		clip("Man drinking coffee in the kitchen", "neutral", "male", "medium", "coffee"),
		clip("Young woman laughing at her phone", "laughing", "female", "hard", "phone"),
		clip("Angry man shouting on the street", "angry", "male", "easy"),
	}
	clips[3].ThumbnailFile, clips[3].PreviewFile, clips[3].Model = "", "", nil
	svc := e.ctl.Catalog
	if _, err := e.ctl.Imports.ImportVideos(ctx, clips, "", nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, e.pool)
	ids := map[string]uuid.UUID{}
	var all []uuid.UUID
	for _, c := range clips {
		id := uuid.MustParse(c.ID)
		ids[c.Title] = id
		all = append(all, id)
	}
	inputs, err := svc.EmbeddingInputs(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	b := embed.NewBuiltin()
	embs := make([]catalog.Embedding, len(inputs))
	for i, in := range inputs {
		v, err := b.Embed(ctx, embed.Document, []string{in.Text})
		if err != nil {
			t.Fatal(err)
		}
		embs[i] = catalog.Embedding{ID: in.ID, Vector: v[0]}
	}
	if err := svc.StoreEmbeddings(ctx, b.Model(), embs); err != nil {
		t.Fatal(err)
	}
	return ids
}

func ptrTo[T any](v T) *T { return &v }

func TestListBrollOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ids := seedCatalog(t, e)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	cust := acct.CustomerKey(t, e.pool, "alice")

	page := func(t *testing.T, key, query string) brollclient.VideoList {
		t.Helper()
		return expect[brollclient.VideoList](t, e.do(t, 0, "GET", "/api/v1/broll?"+query, key, nil), 200)
	}
	first := page(t, cust.Secret, "")
	if pg := first.Pagination; pg.Limit != 20 || pg.Offset != 0 || pg.Page != 1 ||
		pg.Total != 4 || pg.HasMore || !pg.TotalExact {
		t.Fatalf("pagination: %+v", pg)
	}
	videos := first.Videos
	if len(videos) != 4 {
		t.Fatalf("%d videos", len(videos))
	}
	// decode holds every member of the Video object to be there (and
	// similarity, an optional one, to be absent when nil).
	v := videos[slices.Index(videoTitles(first), "Woman laughing in a car")]
	id := ids["Woman laughing in a car"].String()
	if v.Similarity != nil {
		t.Error("similarity outside semantic search")
	}
	if v.Id.String() != id || v.Price != 5 || v.Currency != "USD" || v.Owned ||
		v.DownloadUrl != nil || v.AgeRange != nil || v.Width == nil || *v.Width != 1080 ||
		v.PreviewUrl != "http://api.test/media/previews/"+id ||
		v.ThumbnailUrl == nil || *v.ThumbnailUrl != "http://api.test/media/thumbnails/"+id ||
		v.Model == nil || v.Model.Name != "Ava" {
		t.Fatalf("video: %+v", v)
	}
	angry := videos[slices.Index(videoTitles(first), "Angry man shouting on the street")]
	if angry.ThumbnailUrl != nil || angry.Model != nil || angry.PreviewUrl == "" {
		t.Fatalf("clip without thumbnail: %+v", angry)
	}

	list := func(t *testing.T, query string) []string { return videoTitles(page(t, cust.Secret, query)) }
	t.Run("filters, sorts, keyword search and pages", func(t *testing.T) {
		if got := list(t, "emotion=laughing&sort_by=price&sort_order=desc"); !slices.Equal(got, []string{"Young woman laughing at her phone", "Woman laughing in a car"}) {
			t.Errorf("laughing by price: %v", got)
		}
		if got := list(t, "search=coff"); !slices.Equal(got, []string{"Man drinking coffee in the kitchen"}) {
			t.Errorf("search: %v", got)
		}
		if got := list(t, "search="+url.QueryEscape("lady giggling")); len(got) != 0 {
			t.Errorf("keyword search is not semantic: %v", got)
		}
		if got := list(t, "limit=1&page=2"); len(got) != 1 {
			t.Errorf("page 2: %v", got)
		}
	})
	t.Run("next_cursor walks the same list page by page", func(t *testing.T) {
		var walked []string
		for q := "limit=1&sort_by=price"; ; {
			p := page(t, cust.Secret, q)
			walked = append(walked, videoTitles(p)...)
			next := p.Pagination.NextCursor
			if next == nil || *next == "" {
				break
			}
			q = "limit=1&sort_by=price&cursor=" + url.QueryEscape(*next)
		}
		if want := list(t, "limit=100&sort_by=price"); !slices.Equal(walked, want) {
			t.Errorf("by cursor: %v, want %v", walked, want)
		}
	})
	t.Run("semantic search has similarity on every result, best first", func(t *testing.T) {
		semantic := page(t, cust.Secret, "semantic_search="+url.QueryEscape("lady giggling behind the wheel")+"&limit=3")
		videos := semantic.Videos
		if len(videos) != 3 || videos[0].Title != "Woman laughing in a car" {
			t.Fatalf("semantic: %v", videoTitles(semantic))
		}
		for i, v := range videos {
			if v.Similarity == nil || (i > 0 && *videos[i-1].Similarity < *v.Similarity) {
				t.Fatalf("similarity order: %+v", videos)
			}
		}
		if pg := semantic.Pagination; pg.Total != 4 || !pg.HasMore {
			t.Fatalf("semantic pagination: %+v", pg)
		}
	})
	t.Run("ownership is the calling key's", func(t *testing.T) {
		e.buy(t, 0, cust.Secret, ids["Woman laughing in a car"])
		owned := page(t, cust.Secret, "owned=true").Videos
		if len(owned) != 1 || owned[0].Id.String() != id || !owned[0].Owned || owned[0].DownloadUrl == nil ||
			!strings.HasPrefix(*owned[0].DownloadUrl, "http://api.test/api/v1/downloads/") ||
			owned[0].DownloadUrlExpiresAt == nil {
			t.Fatalf("owned=true: %+v", owned)
		}
		if got := list(t, "owned=false"); len(got) != 3 || slices.Contains(got, "Woman laughing in a car") {
			t.Fatalf("owned=false: %v", got)
		}
		if got := page(t, acct.RootKey.Secret, "owned=true").Videos; len(got) != 0 {
			t.Fatalf("the root key did not buy it: %+v", got)
		}
	})
}

func TestListBrollRejectsBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	seedCatalog(t, e)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	long := url.QueryEscape(strings.Repeat("a", 1001))
	cases := []struct {
		query, code, field string
		allowed            bool
	}{
		{"emotion=joyful", "invalid_request", "emotion", true},
		{"gender=x", "invalid_request", "gender", true},
		{"difficulty=legendary", "invalid_request", "difficulty", true},
		{"sort_by=title", "invalid_request", "sort_by", true},
		{"owned=maybe", "invalid_request", "owned", true},
		{"limit=abc", "invalid_request", "limit", false},
		{"limit=0", "invalid_request", "limit", false},
		{"page=0", "invalid_request", "page", false},
		{"offset=-3", "invalid_request", "offset", false},
		{"min_duration=ten", "invalid_request", "min_duration", false},
		{"max_duration=-1", "invalid_request", "max_duration", false},
		{"min_virality=1.5", "invalid_request", "min_virality", false},
		{"semantic_search=" + long, "invalid_request", "semantic_search", false},
		{"search=car&semantic_search=car", "conflicting_search_params", "", false},
		{"search=%zz", "invalid_request", "", false},
		{"cursor=garbage", "invalid_request", "cursor", false},
		{"cursor=eyJzIjoicHJpY2UifQ&page=2", "invalid_request", "cursor", false},
		{"cursor=eyJzIjoiY3JlYXRlZF9hdCIsIm8iOiJkZXNjIiwicSI6IngiLCJrIjoiMjAyNiIsImkiOiIwMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDAiLCJuIjoxfQ",
			"invalid_request", "cursor", false}, // another query's fingerprint
	}
	for _, tc := range cases {
		r := e.do(t, 0, "GET", "/api/v1/broll?"+tc.query, acct.RootKey.Secret, nil)
		p := problemOf(t, r)
		if r.status != 400 || string(p.Code) != tc.code || deref(p.Field) != tc.field {
			t.Errorf("%.40s: %d %s", tc.query, r.status, r.raw)
			continue
		}
		if tc.allowed && len(deref(p.AllowedValues)) == 0 {
			t.Errorf("%s: no allowed_values: %s", tc.query, r.raw)
		}
		if strings.Contains(strings.ToLower(string(r.raw)), "select") {
			t.Errorf("%s: SQL in the response: %s", tc.query, r.raw)
		}
	}
	// A limit above the maximum is clamped, not refused.
	r := e.do(t, 0, "GET", "/api/v1/broll?limit=1000&search=", acct.RootKey.Secret, nil)
	if r.status != 200 || decode[brollclient.VideoList](t, r).Pagination.Limit != 100 {
		t.Fatalf("limit=1000: %d %s", r.status, r.raw)
	}
}

func TestGetBrollAndFiltersOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ids := seedCatalog(t, e)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 10000})
	cust := acct.CustomerKey(t, e.pool, "alice")
	id := ids["Man drinking coffee in the kitchen"].String()

	if v := expect[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+id, cust.Secret, nil), 200); v.Id.String() != id || v.Price != 10 || v.Owned {
		t.Fatalf("get: %+v", v)
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/not-a-uuid", cust.Secret, nil); r.status != 400 || deref(problemOf(t, r).Field) != "id" {
		t.Fatalf("bad id: %d %s", r.status, r.raw)
	}
	if r := e.do(t, 0, "GET", "/api/v1/broll/"+uuid.NewString(), cust.Secret, nil); r.status != 404 || problemOf(t, r).Code != "not_found" {
		t.Fatalf("unknown id: %d %s", r.status, r.raw)
	}
	e.buy(t, 0, cust.Secret, ids["Man drinking coffee in the kitchen"])
	if v := decode[brollclient.Video](t, e.do(t, 0, "GET", "/api/v1/broll/"+id, cust.Secret, nil)); !v.Owned || v.DownloadUrl == nil || *v.DownloadUrl == "" {
		t.Fatalf("owned get: %+v", v)
	}
	// The purchases list is its own route, not a video id.
	if r := e.do(t, 0, "GET", "/api/v1/broll/purchases", cust.Secret, nil); r.status != 200 || decode[brollclient.PurchaseList](t, r).Purchases == nil {
		t.Fatalf("purchases route shadowed: %d %s", r.status, r.raw)
	}

	f := expect[brollclient.Filters](t, e.do(t, 0, "GET", "/api/v1/broll/filters", cust.Secret, nil), 200)
	if len(f.Emotion) != 3 || f.Emotion[0].Value != "neutral" {
		t.Fatalf("emotions: %+v", f.Emotion)
	}
	if len(f.Difficulty) == 0 {
		t.Fatalf("difficulty: %+v", f)
	}
	if first := f.Difficulty[0]; first.Name != "easy" || first.Price != 5 || first.Count != 2 || first.Currency != "USD" {
		t.Fatalf("difficulty: %+v", f.Difficulty)
	}
	if len(f.Models) != 1 || f.Models[0].Id != "m-1" || f.Models[0].Count != 3 {
		t.Fatalf("models: %+v", f.Models)
	}
	// Every facet is a list, empty or not, never null.
	for k, vals := range map[string][]brollclient.ValueCount{"gender": f.Gender, "age_range": f.AgeRange, "location": f.Location,
		"media_type": f.MediaType, "orientation": f.Orientation} {
		if vals == nil {
			t.Errorf("filters lack %s: %+v", k, f)
		}
	}
}

func TestBrollNeedsReadScope(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ids := seedCatalog(t, e)
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/broll", "/api/v1/broll/filters", "/api/v1/broll/" + ids["Woman laughing in a car"].String()} {
		r := e.do(t, 0, "GET", path, ops.Secret, nil)
		if p := problemOf(t, r); r.status != 403 || p.Code != "insufficient_scope" || deref(p.RequiredScope) != "broll:read" {
			t.Errorf("ops key on %s: %d %s", path, r.status, r.raw)
		}
	}
}
