package mp4meta_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"broll/internal/mp4meta"
	"broll/internal/testkit/mediacorpus"
)

// render makes a real file with ffmpeg (installed by deploy/local/stack.sh).
func render(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func video(t testing.TB, name, size, rate, seconds string, extra ...string) []byte {
	t.Helper()
	args := []string{"-f", "lavfi", "-i", "testsrc=size=" + size + ":rate=" + rate + ":duration=" + seconds,
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p"}
	return render(t, name, append(args, extra...)...)
}

func read(b []byte) (mp4meta.Info, error) {
	return mp4meta.Read(bytes.NewReader(b), int64(len(b)))
}

func TestReadsWholeFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		file []byte
		want mp4meta.Info
	}{
		{"moov at the end", video(t, "a.mp4", "320x180", "30", "1"),
			mp4meta.Info{Width: 320, Height: 180, Duration: 1, FPS: 30, Frames: 30}},
		{"faststart, vertical", video(t, "b.mp4", "180x320", "25", "2", "-movflags", "+faststart"),
			mp4meta.Info{Width: 180, Height: 320, Duration: 2, FPS: 25, Frames: 50}},
		{"QuickTime", video(t, "c.mov", "64x64", "24", "1.5"),
			mp4meta.Info{Width: 64, Height: 64, Duration: 1.5, FPS: 24, Frames: 36}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := read(c.file)
			if err != nil || got != c.want {
				t.Fatalf("Read = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// Every cut of a file, whichever end its movie box is at, is refused as
// corrupt: the reader never passes a file whose samples are not all there.
func TestRefusesTruncatedFiles(t *testing.T) {
	t.Parallel()
	for name, file := range map[string][]byte{
		"moov at the end": video(t, "a.mp4", "160x90", "30", "1"),
		"faststart":       video(t, "b.mp4", "160x90", "30", "1", "-movflags", "+faststart"),
	} {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{0, 4, 20, 40, len(file) / 4, len(file) / 2, len(file) - 100, len(file) - 1} {
				_, err := read(file[:n])
				var c *mp4meta.CorruptError
				if !errors.As(err, &c) {
					t.Errorf("first %d of %d bytes: %v, want a CorruptError", n, len(file), err)
				}
			}
		})
	}
}

func TestRefusesDamagedFiles(t *testing.T) {
	t.Parallel()
	file := video(t, "a.mp4", "160x90", "30", "1", "-movflags", "+faststart")
	var c *mp4meta.CorruptError

	t.Run("chunk offset past the media data", func(t *testing.T) {
		b := bytes.Clone(file)
		i := bytes.Index(b, []byte("stco"))
		if i < 0 {
			t.Fatal("no stco")
		}
		binary.BigEndian.PutUint32(b[i+12:], uint32(len(b)+1000))
		if _, err := read(b); !errors.As(err, &c) {
			t.Fatalf("Read = %v, want a CorruptError", err)
		}
	})
	t.Run("sample count inflated", func(t *testing.T) {
		b := bytes.Clone(file)
		i := bytes.Index(b, []byte("stsz"))
		binary.BigEndian.PutUint32(b[i+12:], 1<<30)
		if _, err := read(b); !errors.As(err, &c) {
			t.Fatalf("Read = %v, want a CorruptError", err)
		}
	})
	t.Run("box larger than its parent", func(t *testing.T) {
		b := bytes.Clone(file)
		i := bytes.Index(b, []byte("trak"))
		binary.BigEndian.PutUint32(b[i-4:], 1<<30)
		if _, err := read(b); !errors.As(err, &c) {
			t.Fatalf("Read = %v, want a CorruptError", err)
		}
	})
	t.Run("sound only", func(t *testing.T) {
		audio := render(t, "a.m4a", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac")
		_, err := read(audio)
		if !errors.As(err, &c) || c.Reason != "the file holds no picture (no video stream)" {
			t.Fatalf("Read = %v, want no video stream", err)
		}
	})
}

// Files that are not ISO BMFF, or kinds this reader leaves alone, go to
// ffprobe.
func TestLeavesOtherFilesToFFprobe(t *testing.T) {
	t.Parallel()
	for name, file := range map[string][]byte{
		"text":       []byte("this is a text file, not a video\n"),
		"webm":       render(t, "a.webm", "-f", "lavfi", "-i", "testsrc=size=64x36:duration=0.5", "-c:v", "libvpx", "-b:v", "50k"),
		"fragmented": video(t, "f.mp4", "64x36", "30", "1", "-movflags", "frag_keyframe+empty_moov"),
	} {
		if _, err := read(file); !errors.Is(err, mp4meta.ErrNotHandled) {
			t.Errorf("%s: %v, want ErrNotHandled", name, err)
		}
	}
}

// FuzzRead: no input makes the reader panic, loop or allocate without
// bound; every answer is an Info that makes sense, ErrNotHandled or a
// CorruptError. The seeds are the probe's corpus (every container, codec,
// turn, trailing bytes and cuts) and the crashers found so far
// (testdata/fuzz/FuzzRead).
func FuzzRead(f *testing.F) {
	for _, file := range mediacorpus.Files(f) {
		f.Add(file.Bytes)
	}
	f.Add([]byte("\x00\x00\x00\x08ftyp"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := read(b)
		var c *mp4meta.CorruptError
		switch {
		case err == nil:
			if info.Width <= 0 || info.Height <= 0 || info.Duration <= 0 || info.FPS <= 0 || info.Frames <= 0 ||
				info.Rotation < 0 || info.Rotation >= 360 || info.TrailingBytes < 0 || info.TrailingBytes >= int64(len(b)) {
				t.Fatalf("Read = %+v for %d bytes", info, len(b))
			}
		case errors.Is(err, mp4meta.ErrNotHandled):
		case errors.As(err, &c):
			if c.Reason == "" {
				t.Fatal("a CorruptError without a reason")
			}
		default:
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// eofReader answers io.EOF with the last bytes of the file, as the ReaderAt
// contract allows and minio's objects do.
type eofReader struct{ *bytes.Reader }

func (r eofReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.Reader.ReadAt(p, off)
	if err == nil && off+int64(n) == r.Size() {
		err = io.EOF
	}
	return n, err
}

func TestReadsThroughReadersThatAnswerEOFAtTheEnd(t *testing.T) {
	t.Parallel()
	file := video(t, "a.mp4", "64x36", "30", "1")
	if _, err := mp4meta.Read(eofReader{bytes.NewReader(file)}, int64(len(file))); err != nil {
		t.Fatalf("Read = %v", err)
	}
}
