package mp4meta_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"broll/internal/mp4meta"
)

// remux copies file with every stream as it is and extra options (a
// display rotation, a faststart).
func remux(t testing.TB, file []byte, name string, extra ...string) []byte {
	t.Helper()
	in := writeTemp(t, "in-"+name, file)
	return render(t, name, append(append([]string{"-i", in, "-map", "0", "-c", "copy"}, extra...), "-f", "mp4")...)
}

// setMatrix writes the 2x2 part of the first track header's matrix
// (16.16 fixed point: a b / c d), as a camera that mirrors its picture
// would.
func setMatrix(t testing.TB, file []byte, a, b, c, d int32) []byte {
	t.Helper()
	out := bytes.Clone(file)
	i := bytes.Index(out, []byte("tkhd"))
	if i < 0 {
		t.Fatal("no tkhd")
	}
	// size, type, version+flags, then version 0's times, id, reserved,
	// duration (5 x 4), reserved (8), layer, group, volume, reserved (8).
	m := i + 4 + 4 + 20 + 8 + 8
	for k, v := range []int32{a, b, 0, c, d} {
		binary.BigEndian.PutUint32(out[m+4*k:], uint32(v))
	}
	return out
}

// Width and height are the picture as a player shows it: the track's
// display matrix turns a phone's landscape pixels upright.
func TestAppliesTheDisplayMatrix(t *testing.T) {
	t.Parallel()
	file := video(t, "a.mp4", "64x36", "10", "1")
	const one = 1 << 16
	cases := []struct {
		name          string
		file          []byte
		width, height int
		rotation      int // -1: a quarter turn, either way
		mirrored      bool
	}{
		{"none", file, 64, 36, 0, false},
		// ffmpeg's rotate tag: its direction has changed between ffmpeg
		// versions; a quarter turn is one whichever way.
		{"rotate=90", remux(t, file, "r90.mp4", "-metadata:s:v:0", "rotate=90"), 36, 64, -1, false},
		{"rotate=180", remux(t, file, "r180.mp4", "-metadata:s:v:0", "rotate=180"), 64, 36, 180, false},
		{"rotate=270", remux(t, file, "r270.mp4", "-metadata:s:v:0", "rotate=270"), 36, 64, -1, false},
		{"rotate=90, faststart", remux(t, file, "r90f.mp4", "-metadata:s:v:0", "rotate=90", "-movflags", "+faststart"), 36, 64, -1, false},
		{"clockwise", setMatrix(t, file, 0, one, -one, 0), 36, 64, 90, false},
		{"counterclockwise", setMatrix(t, file, 0, -one, one, 0), 36, 64, 270, false},
		{"upside down", setMatrix(t, file, -one, 0, 0, -one), 64, 36, 180, false},
		{"scaled, clockwise", setMatrix(t, file, 0, 2*one, -2*one, 0), 36, 64, 90, false},
		{"mirrored", setMatrix(t, file, -one, 0, 0, one), 64, 36, 180, true},
		{"mirrored upside down", setMatrix(t, file, one, 0, 0, -one), 64, 36, 0, true},
		{"mirrored, turned", setMatrix(t, file, 0, one, one, 0), 36, 64, 90, true},
		{"mirrored, turned back", setMatrix(t, file, 0, -one, -one, 0), 36, 64, 270, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := read(c.file)
			if err != nil {
				t.Fatal(err)
			}
			turned := got.Rotation == c.rotation || (c.rotation == -1 && (got.Rotation == 90 || got.Rotation == 270))
			if got.Width != c.width || got.Height != c.height || !turned || got.Mirrored != c.mirrored {
				t.Fatalf("Read = %+v; want %dx%d turned %d, mirrored %v", got, c.width, c.height, c.rotation, c.mirrored)
			}
		})
	}
}

// Bytes after the last complete box that form no box are what players
// skip: the file is sound when its movie box is whole and every sample is
// in it, and the result says how many there are.
func TestToleratesTrailingBytes(t *testing.T) {
	t.Parallel()
	moovLast := video(t, "a.mp4", "64x36", "10", "1")
	faststart := remux(t, moovLast, "f.mp4", "-movflags", "+faststart")
	junk := bytes.Repeat([]byte("uploader text "), 220)[:3072]
	for name, c := range map[string]struct {
		file  []byte
		extra int64
	}{
		"moov at the end":    {append(bytes.Clone(moovLast), junk...), 3072},
		"faststart":          {append(bytes.Clone(faststart), junk...), 3072},
		"three bytes":        {append(bytes.Clone(faststart), "abc"...), 3},
		"an impossible size": {append(bytes.Clone(moovLast), 0, 0, 0, 3, 'a', 'b', 'c', 'd', 'e'), 9},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := read(c.file)
			if err != nil {
				t.Fatalf("Read = %v, want the clip with its trailing bytes noted", err)
			}
			if got.TrailingBytes != c.extra || got.Width != 64 || got.Height != 36 || got.Frames != 10 {
				t.Fatalf("Read = %+v, want 64x36, 10 frames, %d trailing bytes", got, c.extra)
			}
		})
	}
	whole, err := read(faststart)
	if err != nil || whole.TrailingBytes != 0 {
		t.Fatalf("a whole file: %+v, %v; want no trailing bytes", whole, err)
	}
}

// Trailing bytes do not excuse a file whose samples or movie box are not
// all there. (Bytes appended to a cut file that make up exactly what its
// last box misses are read as that box's: only a decode could tell.)
func TestTrailingBytesDoNotHideACut(t *testing.T) {
	t.Parallel()
	moovLast := video(t, "a.mp4", "64x36", "10", "1")
	faststart := remux(t, moovLast, "f.mp4", "-movflags", "+faststart")
	junk := bytes.Repeat([]byte("uploader text "), 220)[:3072]
	mdat := bytes.Index(moovLast, []byte("mdat"))
	for name, file := range map[string][]byte{
		"a cut sample, then junk":    append(bytes.Clone(faststart[:len(faststart)-300]), junk[:100]...),
		"a cut movie box, then junk": append(bytes.Clone(moovLast[:len(moovLast)-300]), junk[:100]...),
		"no movie box, then junk":    append(bytes.Clone(moovLast[:mdat+200]), junk...),
		"junk in place of the movie": append(bytes.Clone(moovLast[:len(moovLast)-len(moovLast)/8]), junk...),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := read(file)
			var c *mp4meta.CorruptError
			if !errors.As(err, &c) {
				t.Fatalf("Read = %v, want a CorruptError", err)
			}
		})
	}
}

// writeTemp writes b to a temporary file and returns its path.
func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
