package media

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// ffmpegFile renders a file with ffmpeg (installed by deploy/local/stack.sh)
// into dir and returns its path.
func ffmpegFile(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-v", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

// turned renders a 64x36 clip as landscape pixels in name's container
// with a display matrix turning it by rotate degrees, as phones record.
func turned(t *testing.T, dir, name, rotate string) string {
	t.Helper()
	src := ffmpegFile(t, dir, "src-"+name, "-f", "lavfi", "-i", "testsrc=size=64x36:rate=10:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
	return ffmpegFile(t, dir, name, "-i", src, "-c", "copy", "-metadata:s:v:0", "rotate="+rotate)
}

// ffprobe's width and height are the coded picture's; the probe reports
// the picture as shown, the display matrix applied.
func TestProbeFileShowsThePictureTurned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		name, rotate  string
		width, height int
	}{
		{"r0.mp4", "0", 64, 36},
		{"r90.mp4", "90", 36, 64},
		{"r180.mov", "180", 64, 36},
		{"r270.mov", "270", 36, 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ProbeFile(ctx, turned(t, dir, c.name, c.rotate))
			if err != nil {
				t.Fatal(err)
			}
			if p.Width != c.width || p.Height != c.height {
				t.Fatalf("probe = %+v, want %dx%d", p, c.width, c.height)
			}
		})
	}
}
