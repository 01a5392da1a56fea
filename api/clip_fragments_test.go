package api

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	segjson "github.com/segmentio/encoding/json"

	"broll/billing"
	"broll/catalog"
	"broll/catalog/search"
	"broll/internal/money"
)

// TestVideoListEncodesAsItsObjects: a list or collection answer written
// from the clips' fragments (clipFragments) is byte for byte what encoding/json writes of
// the same answer, for hostile and random clips, owned ones and semantic
// results (never taken from fragments) among them; encoded as values
// (MCP, collections) the objects ignore their fragments; a fragment is
// used only at its clip's row version and within its life.
func TestVideoListEncodesAsItsObjects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	str := func() string {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b) + `<b>&"` + "\u2028مرحبا😀"
	}
	f := func() *float64 {
		if rng.IntN(4) == 0 {
			return nil
		}
		x := math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7fe))<<52)
		return &x
	}
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	frags := newClipFragments()
	s := &clipsAPI{baseURL: "http://api.test", fragments: frags}
	for round := range 50 {
		var videos []videoJSON
		for i := range 30 {
			v := catalog.Video{ID: uuid.New(), Title: str(), Description: str(), Tags: []string{str(), str()},
				Emotion: str(), Gender: str(), DurationSeconds: f(), FPS: f(), Difficulty: str(),
				Price: money.Cents(rng.Int64N(1e9)), CreatedAt: at.Add(time.Duration(i) * time.Second),
				HasThumbnail: i%2 == 0, Version: uint32(rng.IntN(3))}
			if i%3 == 0 {
				loc := str()
				v.Location = &loc
				v.Model = &catalog.VideoModel{ID: str(), Name: str()}
			}
			if i%7 == 0 {
				sim := rng.Float64()*2 - 1
				v.Similarity = &sim
			}
			j := s.renderVideo(v)
			if i%5 == 0 {
				j.setOwned(billing.Link{URL: "http://api.test/download?sig=" + str(), ExpiresAt: at})
			}
			// Twice: the second comes from the fragment made by the first.
			for range 2 {
				j.encoded = frags.of(v, &j, at)
			}
			if (j.encoded != nil) != (v.Version != 0 && v.Similarity == nil && !j.Owned) {
				t.Fatalf("round %d clip %d: fragment %v for version %d, similarity %v, owned %v",
					round, i, j.encoded != nil, v.Version, v.Similarity, j.Owned)
			}
			videos = append(videos, j)
		}
		plain := make([]videoJSON, len(videos))
		copy(plain, videos)
		want, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := videoList(videos).appendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d: the page from fragments is\n%s (%v)\nencoding/json writes\n%s", round, got, err, want)
		}
		page := brollList(search.Page{Limit: 30, Total: 30, TotalExact: true, NextCursor: str()}, videos)
		gotPage, err := page.appendJSON([]byte("kept"))
		wantPage, _ := json.Marshal(page)
		if err != nil || !bytes.Equal(gotPage, append([]byte("kept"), wantPage...)) {
			t.Fatalf("round %d: the answer\n%s\nwant\n%s", round, gotPage, wantPage)
		}
		desc := str()
		coll := collectionItemsJSON{collectionJSON: collectionJSON{ID: uuid.New(), APIKeyID: uuid.New(), Name: str(),
			Description: &desc, ItemCount: len(videos), CreatedAt: at, UpdatedAt: at, Livemode: round%2 == 0},
			Items: videos, Pagination: keysetPagination(30, round%2 == 1, str())}
		gotColl, err := coll.appendJSON(nil)
		wantColl, _ := json.Marshal(coll)
		if err != nil || !bytes.Equal(gotColl, wantColl) {
			t.Fatalf("round %d: the collection answer\n%s (%v)\nwant\n%s", round, gotColl, err, wantColl)
		}
		// MCP and the other answers encode the objects themselves, with
		// either encoder: the fragments change nothing there.
		for _, marshal := range []func(any) ([]byte, error){json.Marshal, segjson.Marshal} {
			if got, err := marshal(videoList(videos)); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("round %d: encoded as a value, the page is\n%s", round, got)
			}
		}
	}

	// A clip read again at another version is encoded again.
	v := catalog.Video{ID: uuid.New(), Title: "before", Version: 5}
	j := s.renderVideo(v)
	frags.of(v, &j, at)
	v.Title, v.Version = "after", 6
	j = s.renderVideo(v)
	if b := frags.of(v, &j, at); !bytes.Contains(b, []byte(`"after"`)) {
		t.Fatalf("a new version of the clip got the old fragment %s", b)
	}
	// And an old fragment is not used past its life.
	v.Title = "changed at the same version"
	j = s.renderVideo(v)
	if b := frags.of(v, &j, at.Add(clipFragmentTTL)); !bytes.Contains(b, []byte(`"changed at the same version"`)) {
		t.Fatalf("an expired fragment was used: %s", b)
	}
	// An empty page is an empty array, a nil one null, as before.
	for _, l := range []videoList{{}, nil} {
		got, _ := l.appendJSON(nil)
		want, _ := json.Marshal([]videoJSON(l))
		if !bytes.Equal(got, want) {
			t.Fatalf("%#v: %s, want %s", l, got, want)
		}
	}
}
