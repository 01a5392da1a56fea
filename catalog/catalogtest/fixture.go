package catalogtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/embed"
	"broll/internal/money"
	"broll/internal/testkit"
)

// Catalog is a catalog over a database of its own, its files in a local
// store: where the tests of the catalog's readers start.
type Catalog struct {
	Ctx   context.Context
	Pool  *pgxpool.Pool
	Cat   *catalog.Service
	Media *media.Local
	// Src is a directory for import sources.
	Src string
	// Imports imports clips into Cat.
	Imports *imports.Service
}

// New returns a fresh catalog whose embeddings go to queue (nil: none).
func New(t testing.TB, queue catalog.EmbedQueue) *Catalog {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	store, err := media.NewLocal(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	cat := Over(pool, store, queue)
	return &Catalog{Ctx: context.Background(), Pool: pool, Cat: cat, Imports: imports.New(cat), Media: store, Src: t.TempDir()}
}

// Over returns a catalog over pool, storing clip files in store and
// queueing embeddings on queue (nil: clips stay pending until `clips
// reembed`), reading from the primary, its uploads in pool and store: what
// the root builds, for the tests that cannot import it.
func Over(pool *pgxpool.Pool, store media.Store, queue catalog.EmbedQueue) *catalog.Service {
	return catalog.NewService(catalog.ServiceOptions{Pool: pool, Media: store, Queue: queue, Uploads: media.NewUploads(pool, store)})
}

// Fixture is a small imported catalog with every clip's input kept, so that
// tests can compute the expected answer of a search independently of SQL.
type Fixture struct {
	*Catalog
	Clips []Clip
	ByKey map[string]*Clip
	// QE embeds semantic_search texts with the built-in model (Model),
	// which embedded every clip but the last filler.
	QE    *embed.QueryCache
	Model string
}

// Clip is one clip of a Fixture as it was imported.
type Clip struct {
	Key     string
	ID      uuid.UUID
	In      imports.VideoInput
	Age     int // minutes before now: created_at order
	Retired bool
	Ready   bool // has a current-model vector
}

func ptr[T any](v T) *T { return &v }

// named clips; the tests refer to them by key.
func namedClips() []Clip {
	c := func(key, title, emotion, gender, age, loc, media, orient string, dur *float64, diff string, vir *int, model *catalog.VideoModel, tags ...string) Clip {
		return Clip{Key: key, In: imports.VideoInput{Title: title, Emotion: emotion, Gender: gender, AgeRange: age,
			Location: loc, MediaType: media, Orientation: orient, DurationSeconds: dur, Difficulty: diff,
			ViralityScore: vir, Model: model, Tags: tags}}
	}
	ava, bea := &catalog.VideoModel{ID: "m-ava", Name: "Ava Stone"}, &catalog.VideoModel{ID: "m-bea", Name: "Bea Cruz"}
	return []Clip{
		c("laughCouch", "Young woman laughing at her phone on the couch", "laughing", "female", "18-24", "home", "video", "vertical", ptr(12.5), "easy", ptr(80), ava, "phone", "couch", "lol"),
		c("carSmile", "Woman smiling while driving her car", "happy", "female", "25-34", "car", "video", "vertical", ptr(8.0), "easy", ptr(65), bea, "car", "commute"),
		c("coffeeMan", "Man drinking coffee in the kitchen", "neutral", "male", "35-44", "kitchen", "video", "horizontal", ptr(20.0), "medium", ptr(40), nil, "coffee", "morning"),
		c("unboxing", "Surprised man unboxing a package", "surprised", "male", "25-34", "home", "video", "square", ptr(15.0), "hard", ptr(90), nil, "delivery"),
		c("yoga", "Woman doing yoga at the gym", "confident", "female", "35-44", "gym", "video", "horizontal", ptr(30.0), "medium", ptr(20), bea),
		c("crying", "Sad teenager crying in the bedroom", "sad", "non_binary", "18-24", "home", "image", "vertical", nil, "easy", nil, nil, "tears"),
		c("street", "Angry man shouting on the street", "angry", "male", "45-54", "street", "video", "horizontal", ptr(5.0), "hard", ptr(55), nil),
		c("beach", "Excited friends cheering at the beach", "excited", "female", "55+", "beach", "video", "horizontal", ptr(25.0), "medium", ptr(70), nil, "summer"),
		c("carLaugh", "Woman laughing in a car", "laughing", "female", "25-34", "car", "video", "vertical", ptr(10.0), "medium", ptr(60), ava),
		c("coffeeWoman", "Woman sipping a latte at the coffee shop", "happy", "female", "25-34", "cafe", "video", "vertical", ptr(14.0), "easy", ptr(75), nil, "coffee"),
		c("retired", "Woman laughing at a retired joke", "laughing", "female", "25-34", "home", "video", "vertical", ptr(9.0), "easy", ptr(99), nil),
	}
}

// fillerClips cycle through the enums so that every filter has several
// matches; their words stay clear of the named clips' keywords.
func fillerClips(n int) []Clip {
	places := []string{"office", "park", "store"}
	tiers := []string{"easy", "medium", "hard"}
	out := make([]Clip, n)
	for i := range out {
		in := imports.VideoInput{
			Title:       fmt.Sprintf("Person number %d standing in the %s", i, places[i%3]),
			Emotion:     catalog.Emotions()[i%13],
			Gender:      catalog.Genders()[i%3],
			Location:    places[i%3],
			Orientation: catalog.Orientations()[i%3],
			Difficulty:  tiers[(i/2)%3],
		}
		if i%4 != 0 {
			in.AgeRange = catalog.AgeRanges()[i%5]
		}
		if i%5 != 0 {
			in.DurationSeconds = ptr(float64(3 + (i*7)%28))
			in.ViralityScore = ptr((i * 37) % 101)
		}
		out[i] = Clip{Key: fmt.Sprint("filler", i), In: in}
	}
	return out
}

// NewFixture imports the named clips and 40 fillers, spreads their
// created_at over the last hours (in list order, newest first), embeds all
// but the last filler with the built-in embedder and retires one clip.
func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	b := New(t, nil)
	f := &Fixture{Catalog: b, ByKey: map[string]*Clip{}}
	full := b.WriteFile(t, "media/full.avi", []byte("RIFF0000AVI "))
	preview := b.WriteFile(t, "media/preview.gif", []byte("GIF89a-preview"))
	thumb := b.WriteFile(t, "media/thumb.jpg", []byte("\xff\xd8\xff-thumbnail"))

	f.Clips = append(namedClips(), fillerClips(40)...)
	inputs := make([]imports.VideoInput, len(f.Clips))
	ids := make([]uuid.UUID, len(f.Clips))
	for i := range f.Clips {
		fc := &f.Clips[i]
		fc.ID, fc.Age = uuid.New(), i*10
		fc.In.ID, fc.In.MediaFile = fc.ID.String(), full
		if i%2 == 0 {
			fc.In.PreviewFile, fc.In.ThumbnailFile = preview, thumb
		}
		inputs[i], ids[i] = fc.In, fc.ID
		f.ByKey[fc.Key] = fc
	}
	if _, err := b.Imports.ImportVideos(b.Ctx, inputs, b.Src, nil); err != nil {
		t.Fatal(err)
	}
	MediaPassed(t, b.Pool)
	if _, err := b.Pool.Exec(b.Ctx, `
		UPDATE videos v SET created_at = now() - make_interval(mins => u.age)
		FROM unnest($1::uuid[], $2::int[]) AS u(id, age) WHERE v.id = u.id`,
		ids, f.ages()); err != nil {
		t.Fatal(err)
	}

	builtin := embed.NewBuiltin()
	f.Model = builtin.Model()
	f.QE = embed.NewCachedQueryEmbedder(builtin, nil, "", embed.QueryCacheOptions{})
	f.Embed(t, builtin, ids[:len(ids)-1])

	f.ByKey["retired"].Retired = true
	if _, err := b.Cat.Retire(b.Ctx, f.ByKey["retired"].ID); err != nil {
		t.Fatal(err)
	}
	return f
}

// WriteFile writes a source file under c.Src and returns its relative path.
func (c *Catalog) WriteFile(t testing.TB, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(c.Src, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}

// Count runs a count query.
func (c *Catalog) Count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := c.Pool.QueryRow(c.Ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (f *Fixture) ages() []int {
	out := make([]int, len(f.Clips))
	for i, c := range f.Clips {
		out[i] = c.Age
	}
	return out
}

// Embed stores e's vectors of the clips ids, which are then Ready.
func (f *Fixture) Embed(t testing.TB, e embed.Embedder, ids []uuid.UUID) {
	t.Helper()
	inputs, err := f.Cat.EmbeddingInputs(f.Ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(inputs))
	for i, in := range inputs {
		texts[i] = in.Text
	}
	vecs, err := e.Embed(f.Ctx, embed.Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	embs := make([]catalog.Embedding, len(inputs))
	for i, in := range inputs {
		embs[i] = catalog.Embedding{ID: in.ID, Vector: vecs[i]}
	}
	if err := f.Cat.StoreEmbeddings(f.Ctx, e.Model(), embs); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		for i := range f.Clips {
			if f.Clips[i].ID == id {
				f.Clips[i].Ready = true
			}
		}
	}
}

// Live returns the clips that are not retired and pass keep, newest first.
func (f *Fixture) Live(keep func(c Clip) bool) []Clip {
	var out []Clip
	for _, c := range f.Clips {
		if !c.Retired && (keep == nil || keep(c)) {
			out = append(out, c)
		}
	}
	return out
}

// Keys names the clips of a page, in order.
func (f *Fixture) Keys(videos []catalog.Video) []string {
	out := make([]string, len(videos))
	for i, v := range videos {
		out[i] = "?" + v.ID.String()
		for _, c := range f.Clips {
			if c.ID == v.ID {
				out[i] = c.Key
			}
		}
	}
	return out
}

// NewKey inserts an account and a root key row for ownership tests; the
// catalog reads purchases but does not make them.
func (f *Fixture) NewKey(t testing.TB) uuid.UUID {
	t.Helper()
	var hash [32]byte
	_, _ = rand.Read(hash[:])
	var id uuid.UUID
	err := f.Pool.QueryRow(f.Ctx, `
		WITH a AS (INSERT INTO accounts (name, source) VALUES ('Test', $1) RETURNING id)
		INSERT INTO api_keys (account_id, kind, scopes, key_hash, key_prefix)
		SELECT id, 'root', '{broll:read}', $2, 'dsk_test' FROM a RETURNING id`,
		fmt.Sprintf("src-%x", hash[:6]), hash[:]).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Purchase records that keyID bought videoID.
func (f *Fixture) Purchase(t testing.TB, keyID, videoID uuid.UUID) {
	t.Helper()
	_, err := f.Pool.Exec(f.Ctx, `
		INSERT INTO purchases (account_id, api_key_id, video_id, price_cents, tier)
		SELECT k.account_id, k.id, v.id, 500, v.difficulty FROM api_keys k, videos v
		WHERE k.id = $1 AND v.id = $2`, keyID, videoID)
	if err != nil {
		t.Fatal(err)
	}
}

// ClipKeys names clips, in order.
func ClipKeys(cs []Clip) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Key
	}
	return out
}

// SortedKeys is keys in sort order.
func SortedKeys(keys []string) []string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return s
}

// TierPrice is the price of the fixture's tiers (those of the migrations).
func TierPrice(name string) money.Cents {
	return map[string]money.Cents{"easy": 500, "medium": 1000, "hard": 2500}[name]
}

// Words lists the lower-case words a clip's keyword index is made of.
func (c Clip) Words() []string {
	text := strings.Join([]string{c.In.Title, c.In.Description, strings.Join(c.In.Tags, " "),
		c.In.Emotion, c.In.Location}, " ")
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
}
