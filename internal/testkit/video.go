package testkit

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// RenderVideo renders an H.264 MP4 of ffmpeg's test source, width x height
// at 30 fps for seconds (a multiple of 1/30 gives that duration exactly),
// into the test's temporary directory and returns its path. ffmpeg is
// installed by deploy/local/stack.sh; the test fails without it.
func RenderVideo(t testing.TB, width, height int, seconds float64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), fmt.Sprintf("testsrc-%dx%d.mp4", width, height))
	src := fmt.Sprintf("testsrc=size=%dx%d:rate=30:duration=%g", width, height, seconds)
	cmd := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", src,
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (installed by deploy/local/stack.sh): %v: %s", err, b)
	}
	return out
}
