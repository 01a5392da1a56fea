package demo

import (
	"bytes"
	"context"
	"encoding/binary"
	"image/gif"
	"image/jpeg"
	"os"
	"strconv"
	"testing"

	"broll/catalog"
	"broll/catalog/media"
)

func TestDemoMediaDecodes(t *testing.T) {
	t.Parallel()
	sets, err := writeDemoMedia(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range catalog.Orientations() {
		if len(sets[o]) != demoVariantsPerOrientation {
			t.Fatalf("%s variants = %d", o, len(sets[o]))
		}
	}
	for _, o := range catalog.Orientations() {
		files := sets[o][0]
		thumbW, thumbH := demoSize(o, "thumbnail")

		b := readFile(t, files.Thumbnail)
		img, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s thumbnail: %v", o, err)
		}
		if s := img.Bounds().Size(); s.X != thumbW || s.Y != thumbH {
			t.Fatalf("%s thumbnail is %v", o, s)
		}
		if media.ContentType(files.Thumbnail) != "image/jpeg" {
			t.Fatalf("thumbnail content type %s", media.ContentType(files.Thumbnail))
		}

		// The stack installs ffmpeg: the demo is real H.264 video, the
		// preview made as the worker makes previews.
		full, err := media.ProbeFile(context.Background(), files.Full)
		fromSource := func(p media.Probe) bool {
			for _, s := range demoSources {
				if strconv.FormatFloat(p.Duration, 'f', -1, 64) == s.seconds && p.FPS == float64(s.rate) {
					return true
				}
			}
			return false
		}
		if err != nil || full.MediaType != "video" || !fromSource(full) || full.Orientation() != o {
			t.Fatalf("%s full %s: %+v %v", o, files.Full, full, err)
		}
		if media.ContentType(files.Full) != "video/mp4" || media.ContentType(files.Preview) != "video/mp4" {
			t.Fatalf("content types %s %s", media.ContentType(files.Full), media.ContentType(files.Preview))
		}
		prev, err := media.ProbeFile(context.Background(), files.Preview)
		if err != nil || max(prev.Width, prev.Height) > media.PreviewLongSide || prev.Duration > media.PreviewMaxSeconds {
			t.Fatalf("%s preview: %+v %v", o, prev, err)
		}
		for name, p := range map[string]string{"thumbnail": files.Thumbnail, "preview": files.Preview, "full": files.Full} {
			if n := len(readFile(t, p)); n > 400_000 {
				t.Errorf("%s %s is %d bytes; demo files should stay small", o, name, n)
			}
		}
	}
	if bytes.Equal(readFile(t, sets["vertical"][0].Thumbnail), readFile(t, sets["vertical"][1].Thumbnail)) {
		t.Fatalf("variants look the same")
	}
}

// checkAVI walks the RIFF structure the way a player does: headers, the
// movi list and every idx1 entry, decoding each frame it points at.
func checkAVI(t *testing.T, b []byte, w, h, frames int) {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "AVI " {
		t.Fatalf("not a RIFF AVI")
	}
	if int(le.Uint32(b[4:8])) != len(b)-8 {
		t.Fatalf("RIFF size %d, file %d", le.Uint32(b[4:8]), len(b))
	}
	chunks := map[string][]byte{}
	var moviAt int
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(le.Uint32(b[p+4:p+8]))
		if p+8+size > len(b) {
			t.Fatalf("chunk %s overruns the file", id)
		}
		body := b[p+8 : p+8+size]
		if id == "LIST" {
			id = string(body[:4])
			if id == "movi" {
				moviAt = p + 8
			}
		}
		chunks[id] = body
		p += 8 + size + size%2
	}
	hdrl, movi, idx := chunks["hdrl"], chunks["movi"], chunks["idx1"]
	if hdrl == nil || movi == nil || idx == nil {
		t.Fatalf("missing hdrl/movi/idx1: %v", len(chunks))
	}
	avih := hdrl[12:]
	if string(hdrl[4:8]) != "avih" || int(le.Uint32(avih[16:20])) != frames ||
		int(le.Uint32(avih[32:36])) != w || int(le.Uint32(avih[36:40])) != h {
		t.Fatalf("bad avih")
	}
	strl := hdrl[4+8+56+8:] // past "hdrl", the avih chunk and the LIST header
	if string(strl[:4]) != "strl" || string(strl[4:8]) != "strh" ||
		string(strl[12:16]) != "vids" || string(strl[16:20]) != "MJPG" {
		t.Fatalf("bad strh: %q", strl[:20])
	}
	strf := strl[4+8+56:]
	if string(strf[:4]) != "strf" || string(strf[8+16:8+20]) != "MJPG" {
		t.Fatalf("bad strf")
	}
	if len(idx) != 16*frames {
		t.Fatalf("idx1 has %d bytes for %d frames", len(idx), frames)
	}
	for i := range frames {
		e := idx[16*i:]
		off, size := int(le.Uint32(e[8:12])), int(le.Uint32(e[12:16]))
		chunk := b[moviAt+off:]
		if string(e[:4]) != "00dc" || string(chunk[:4]) != "00dc" || int(le.Uint32(chunk[4:8])) != size {
			t.Fatalf("frame %d: index does not point at its chunk", i)
		}
		img, err := jpeg.Decode(bytes.NewReader(chunk[8 : 8+size]))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if s := img.Bounds().Size(); s.X != w || s.Y != h {
			t.Fatalf("frame %d is %v", i, s)
		}
	}
}

// Without ffmpeg (the image's brollctl) the demo is drawn in Go.
func TestDemoMediaWithoutFFmpegIsDrawn(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	sets, err := writeDemoMedia(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := sets["vertical"][0]
	g, err := gif.DecodeAll(bytes.NewReader(readFile(t, files.Preview)))
	if err != nil || len(g.Image) < 2 {
		t.Fatalf("preview: %v", err)
	}
	w, h := demoSize("vertical", "full")
	checkAVI(t, readFile(t, files.Full), w, h, demoAVIFrames)
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func BenchmarkWriteDemoMedia(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := writeDemoMedia(dir); err != nil {
			b.Fatal(err)
		}
	}
}
