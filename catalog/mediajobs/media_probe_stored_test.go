package mediajobs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"broll/catalog/media"
)

// renderFile makes a real file with ffmpeg (installed by deploy/local/stack.sh).
func renderFile(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

// The in-process probe reads what ffprobe reads from the files clips come
// in: the same size, duration and frame rate, so a clip's figures do not
// depend on which probe passed it.
func TestInProcessProbeAgreesWithFFprobe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := media.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{media: store}
	src := func(size, rate, seconds string) []string {
		return []string{"-f", "lavfi", "-i", "testsrc=size=" + size + ":rate=" + rate + ":duration=" + seconds}
	}
	x264 := []string{"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p"}
	files := map[string][]string{
		"horizontal.mp4": append(src("320x180", "30", "1"), x264...),
		"vertical.mp4":   append(append(src("180x320", "25", "2.5"), x264...), "-movflags", "+faststart"),
		"square.mov":     append(src("96x96", "24", "1.5"), x264...),
		"ntsc.mp4":       append(src("160x90", "30000/1001", "2"), x264...),
		"b-frames.mp4": append(src("160x90", "30", "2"), "-c:v", "libx264", "-preset", "medium", "-bf", "2",
			"-pix_fmt", "yuv420p"),
		"with-sound.mp4": append(append(src("160x90", "30", "1"), "-f", "lavfi", "-i", "sine=duration=1.4"),
			append(x264, "-c:a", "aac", "-shortest")...),
		"longer-sound.mp4": append(append(src("160x90", "30", "1"), "-f", "lavfi", "-i", "sine=duration=1.4"),
			append(x264, "-c:a", "aac")...),
		"mpeg4.mp4": append(src("176x144", "15", "1"), "-c:v", "mpeg4"),
		// A phone's upright clip: landscape pixels, a display matrix.
		"turned.mp4":      append(append(src("160x90", "30", "1"), x264...), "-metadata:s:v:0", "rotate=90"),
		"turned-back.mov": append(append(src("160x90", "30", "1"), x264...), "-metadata:s:v:0", "rotate=270"),
		"upside-down.mp4": append(append(src("160x90", "30", "1"), x264...), "-metadata:s:v:0", "rotate=180"),
	}
	for name, args := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := renderFile(t, name, args...)
			key := "clips/" + name
			if _, err := s.putFile(ctx, key, path); err != nil {
				t.Fatal(err)
			}
			want, err := media.ProbeFile(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.probeInProcess(ctx, key)
			if err != nil || got != want {
				t.Fatalf("in-process probe = %+v, %v; ffprobe = %+v", got, err, want)
			}
		})
	}
}

// Corrupt and truncated uploads are refused with a reason; files that are
// not MP4 still go to ffprobe, which refuses what it cannot read.
func TestStoredProbeRefusesUnsoundFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := media.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{media: store}
	full, err := os.ReadFile(renderFile(t, "a.mp4", "-f", "lavfi", "-i", "testsrc=size=160x90:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"text.mp4":      []byte("this is a text file, not a video\n"),
		"half.mp4":      full[:len(full)/2],
		"no-tail.mp4":   full[:len(full)-10],
		"empty.mp4":     nil,
		"garbage.avi":   []byte("RIFF\x00\x00\x00\x00AVI garbage"),
		"zeroed.mp4":    append(append([]byte{}, full[:64]...), make([]byte, len(full)-64)...),
		"header-only.m": full[:32],
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := os.WriteFile(filepath.Join(store.Dir(), name), b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.probeStored(ctx, name)
			var unreadable *media.UnreadableError
			if !errors.As(err, &unreadable) || unreadable.Reason == "" {
				t.Fatalf("probe of %s = %v, want a media.UnreadableError", name, err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := s.probeStored(ctx, "clips/none.mp4")
		var unreadable *media.UnreadableError
		if !errors.As(err, &unreadable) {
			t.Fatalf("probe of a missing file = %v, want a media.UnreadableError", err)
		}
	})
}
