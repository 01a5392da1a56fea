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

	"broll/catalog/search"
	"broll/internal/money"
)

// TestAnswersEncodeAsEncodingJSONDoes: the app encodes its answers with
// segmentio/encoding's json (newApp) for its speed; clients and the
// OpenAPI document know encoding/json's output, so the two must write the
// same bytes for what the answers hold: strings a hostile or foreign
// catalog holds (HTML, line separators, control characters, invalid
// UTF-8, Arabic and emoji), floats at every magnitude, money, times,
// nil and empty slices, maps (key order), pointers, raw messages and
// embedded structs; and random strings and floats besides.
func TestAnswersEncodeAsEncodingJSONDoes(t *testing.T) {
	s := func(x string) *string { return &x }
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.FixedZone("", 5*3600+1800))
	page := brollList(search.Page{Limit: 20, Page: 1, Total: 3, TotalExact: true, NextCursor: "c"}, []videoJSON{
		{ID: uuid.New(), Title: `<script>alert("x")</script> & 'co'`, Description: "line\u2028sep\u2029para\x00\x1f\x7f",
			Tags: []string{"مرحبا", "emoji 😀", "bad \xff\xfe utf-8", ""}, Emotion: "happy", Gender: "female",
			AgeRange: s("25-34"), DurationSeconds: f(12.5), Width: n(1080), Height: n(1920), FPS: f(29.97),
			Difficulty: "medium", Price: money.Cents(1250), Currency: "USD", ViralityScore: n(0),
			Model: &modelJSON{ID: "m1", Name: "Ana"}, PreviewURL: "http://api.test/media/a?b=c&d=e",
			Similarity: f(0.123456), CreatedAt: at, DownloadURLExpiresAt: &at, Retired: true},
		{ID: uuid.Nil, Tags: nil, Price: money.Cents(-5), CreatedAt: time.Time{}},
	})
	values := []any{
		page,
		problemLike{Type: "about:blank", Title: "Bad", Status: 400, Errors: []map[string]any{{"field": "x", "n": 1.5}}},
		map[string]any{"b": 1, "a": []any{nil, true, "x", 1e21, 1e-7, 0.000001, 123456789.0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}},
		map[string]int{"z": 1, "é": 2, "A": 3, "": 4},
		json.RawMessage(`{"k":[1,2,{"x":null}]}`),
		[]byte("bytes are base64"),
		struct {
			Embedded
			Own string `json:"own,omitempty"`
		}{Embedded{In: "in"}, ""},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		values = append(values, string(b), math.Float64frombits(rng.Uint64()&^(0x7ff<<52)|uint64(rng.IntN(0x7fe))<<52))
	}
	for i, v := range values {
		want, wantErr := json.Marshal(v)
		got, err := segjson.Marshal(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("value %d (%T): segmentio wrote %q (%v), encoding/json %q (%v)", i, v, got, err, want, wantErr)
		}
	}
}

type problemLike struct {
	Type   string           `json:"type"`
	Title  string           `json:"title"`
	Status int              `json:"status"`
	Detail string           `json:"detail,omitempty"`
	Errors []map[string]any `json:"errors,omitempty"`
}

type Embedded struct {
	In string `json:"in"`
}
