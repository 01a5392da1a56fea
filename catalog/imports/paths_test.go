package imports

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/catalog"
)

// TestEveryPathChecksAClipAlike: what an imported clip may be has one home
// (the validator's check), and each way in (JSON Lines for `brollctl clips
// import`, the ops endpoint's ImportVideosWithin, the demo seed's
// ImportProbed and ImportVideos) refuses the same clips with the same
// problems, and writes nothing.
func TestEveryPathChecksAClipAlike(t *testing.T) {
	t.Parallel()
	b := setup(t)
	full := filepath.Join(b.src, b.writeFile(t, "media/full.avi", []byte("RIFF")))
	good := VideoInput{Title: "Woman reading on a train", Emotion: "curious", Gender: "female", Difficulty: "easy",
		MediaFile: full}
	cases := map[string]func(*VideoInput){
		"no title":        func(c *VideoInput) { c.Title = " " },
		"unknown emotion": func(c *VideoInput) { c.Emotion = "bored" },
		"no gender":       func(c *VideoInput) { c.Gender = "" },
		"unknown tier":    func(c *VideoInput) { c.Difficulty = "platinum" },
		"long location":   func(c *VideoInput) { c.Location = strings.Repeat("x", catalog.MaxLocationChars+1) },
		"model without id": func(c *VideoInput) {
			c.Model = &catalog.VideoModel{Name: "Ava"}
		},
		"bad figures": func(c *VideoInput) {
			w, fps := 0, -1.0
			c.Width, c.FPS = &w, &fps
		},
		"missing file":  func(c *VideoInput) { c.MediaFile = filepath.Join(b.src, "media", "gone.avi") },
		"two files":     func(c *VideoInput) { c.UploadID = "0b9f3a4e-8c51-4f8e-9d2a-6a3c1e7b5d10" },
		"bad upload id": func(c *VideoInput) { c.MediaFile, c.UploadID = "", "upload-1" },
		"bad id":        func(c *VideoInput) { c.ID = "clip-1" },
	}
	for name, change := range cases {
		bad := good
		change(&bad)
		clips := []VideoInput{good, bad}
		line, err := json.Marshal(bad)
		if err != nil {
			t.Fatal(err)
		}
		first, err := json.Marshal(good)
		if err != nil {
			t.Fatal(err)
		}
		paths := map[string]func() (Result, error){
			"Import": func() (Result, error) {
				return b.svc.Import(b.ctx, strings.NewReader(string(first)+"\n"+string(line)+"\n"), b.src, nil)
			},
			"ImportVideos": func() (Result, error) { return b.svc.ImportVideos(b.ctx, clips, b.src, nil) },
			"ImportVideosWithin": func() (Result, error) {
				return b.svc.ImportVideosWithin(b.ctx, uuid.Nil, b.src, clips)
			},
			"ImportProbed": func() (Result, error) { return b.svc.ImportProbed(b.ctx, clips, nil) },
		}
		var want []LineError
		for _, path := range []string{"Import", "ImportVideos", "ImportVideosWithin", "ImportProbed"} {
			_, err := paths[path]()
			var ie *Error
			if !errors.As(err, &ie) || len(ie.Lines) == 0 {
				t.Errorf("%s: %s = %v, want the clip refused", name, path, err)
				continue
			}
			if want == nil {
				want = ie.Lines
			} else if !reflect.DeepEqual(ie.Lines, want) {
				t.Errorf("%s: %s found %v, Import found %v", name, path, ie.Lines, want)
			}
		}
	}
	if n := b.count(t, `SELECT count(*) FROM videos`); n != 0 {
		t.Fatalf("%d clips written by refused imports", n)
	}
}
