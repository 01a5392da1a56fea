package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/catalog/catalogtest"
	"broll/embed"
	"broll/internal/money"
)

// fixture is a small imported catalog with every clip's input kept, so that
// tests can compute the expected answer of a search independently of SQL.
type fixture struct {
	bundle
	clips []fixClip
	byKey map[string]*fixClip
	qe    QueryEmbedder
	model string
}

type fixClip struct {
	key     string
	id      uuid.UUID
	in      VideoInput
	age     int // minutes before now: created_at order
	retired bool
	ready   bool // has a current-model vector
}

func ptr[T any](v T) *T { return &v }

// named clips; the tests refer to them by key.
func namedClips() []fixClip {
	c := func(key, title, emotion, gender, age, loc, media, orient string, dur *float64, diff string, vir *int, model *VideoModel, tags ...string) fixClip {
		return fixClip{key: key, in: VideoInput{Title: title, Emotion: emotion, Gender: gender, AgeRange: age,
			Location: loc, MediaType: media, Orientation: orient, DurationSeconds: dur, Difficulty: diff,
			ViralityScore: vir, Model: model, Tags: tags}}
	}
	ava, bea := &VideoModel{ID: "m-ava", Name: "Ava Stone"}, &VideoModel{ID: "m-bea", Name: "Bea Cruz"}
	return []fixClip{
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
func fillerClips(n int) []fixClip {
	places := []string{"office", "park", "store"}
	tiers := []string{"easy", "medium", "hard"}
	out := make([]fixClip, n)
	for i := range out {
		in := VideoInput{
			Title:       fmt.Sprintf("Person number %d standing in the %s", i, places[i%3]),
			Emotion:     Emotions()[i%13],
			Gender:      Genders()[i%3],
			Location:    places[i%3],
			Orientation: Orientations()[i%3],
			Difficulty:  tiers[(i/2)%3],
		}
		if i%4 != 0 {
			in.AgeRange = AgeRanges()[i%5]
		}
		if i%5 != 0 {
			in.DurationSeconds = ptr(float64(3 + (i*7)%28))
			in.ViralityScore = ptr((i * 37) % 101)
		}
		out[i] = fixClip{key: fmt.Sprint("filler", i), in: in}
	}
	return out
}

// newFixture imports the named clips and 40 fillers, spreads their
// created_at over the last hours (in list order, newest first), embeds all
// but the last filler with the built-in embedder and retires one clip.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	b := setup(t)
	f := &fixture{bundle: b, byKey: map[string]*fixClip{}}
	full := b.writeFile(t, "media/full.avi", []byte("RIFF0000AVI "))
	preview := b.writeFile(t, "media/preview.gif", []byte("GIF89a-preview"))
	thumb := b.writeFile(t, "media/thumb.jpg", []byte("\xff\xd8\xff-thumbnail"))

	f.clips = append(namedClips(), fillerClips(40)...)
	inputs := make([]VideoInput, len(f.clips))
	ids := make([]uuid.UUID, len(f.clips))
	for i := range f.clips {
		fc := &f.clips[i]
		fc.id, fc.age = uuid.New(), i*10
		fc.in.ID, fc.in.MediaFile = fc.id.String(), full
		if i%2 == 0 {
			fc.in.PreviewFile, fc.in.ThumbnailFile = preview, thumb
		}
		inputs[i], ids[i] = fc.in, fc.id
		f.byKey[fc.key] = fc
	}
	if _, err := b.svc.ImportVideos(b.ctx, inputs, b.src, nil); err != nil {
		t.Fatal(err)
	}
	catalogtest.MediaPassed(t, b.pool)
	if _, err := b.pool.Exec(b.ctx, `
		UPDATE videos v SET created_at = now() - make_interval(mins => u.age)
		FROM unnest($1::uuid[], $2::int[]) AS u(id, age) WHERE v.id = u.id`,
		ids, f.ages()); err != nil {
		t.Fatal(err)
	}

	builtin := embed.NewBuiltin()
	f.model = builtin.Model()
	f.qe = embed.NewCachedQueryEmbedder(builtin, nil, "", 0)
	f.embed(t, builtin, ids[:len(ids)-1])

	f.byKey["retired"].retired = true
	if _, err := b.svc.Retire(b.ctx, f.byKey["retired"].id); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) ages() []int {
	out := make([]int, len(f.clips))
	for i, c := range f.clips {
		out[i] = c.age
	}
	return out
}

func (f *fixture) embed(t *testing.T, e embed.Embedder, ids []uuid.UUID) {
	t.Helper()
	inputs, err := f.svc.EmbeddingInputs(f.ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(inputs))
	for i, in := range inputs {
		texts[i] = in.Text
	}
	vecs, err := e.Embed(f.ctx, embed.Document, texts)
	if err != nil {
		t.Fatal(err)
	}
	embs := make([]Embedding, len(inputs))
	for i, in := range inputs {
		embs[i] = Embedding{ID: in.ID, Vector: vecs[i]}
	}
	if err := f.svc.StoreEmbeddings(f.ctx, e.Model(), embs); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		for i := range f.clips {
			if f.clips[i].id == id {
				f.clips[i].ready = true
			}
		}
	}
}

// live returns the clips that are not retired and pass keep, newest first.
func (f *fixture) live(keep func(c fixClip) bool) []fixClip {
	var out []fixClip
	for _, c := range f.clips {
		if !c.retired && (keep == nil || keep(c)) {
			out = append(out, c)
		}
	}
	return out
}

func (f *fixture) search(t *testing.T, q Query) Page {
	t.Helper()
	p, err := f.svc.Search(f.ctx, q, f.qe)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return p
}

// keys names the clips of a page, in order.
func (f *fixture) keys(videos []Video) []string {
	out := make([]string, len(videos))
	for i, v := range videos {
		out[i] = "?" + v.ID.String()
		for _, c := range f.clips {
			if c.id == v.ID {
				out[i] = c.key
			}
		}
	}
	return out
}

func clipKeys(cs []fixClip) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.key
	}
	return out
}

func sortedKeys(keys []string) []string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return s
}

func tierPrice(name string) money.Cents {
	return map[string]money.Cents{"easy": 500, "medium": 1000, "hard": 2500}[name]
}

// words lists the lower-case words a clip's keyword index is made of.
func (c fixClip) words() []string {
	text := strings.Join([]string{c.in.Title, c.in.Description, strings.Join(c.in.Tags, " "),
		c.in.Emotion, c.in.Location}, " ")
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
}
