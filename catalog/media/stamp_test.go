package media

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every container StampFormat accepts carries the comment through a remux
// that ffprobe reads back as the format's comment tag; the picture formats
// are refused.
func TestStampEveryContainer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	const comment = "Licence lic_0123456789abcdef0123456789abcdef; verify at https://api.example.com/licenses/lic_0123456789abcdef0123456789abcdef"
	encoders := map[string][]string{
		".mp4":  {"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"},
		".mov":  {"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"},
		".mkv":  {"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"},
		".webm": {"-c:v", "libvpx", "-b:v", "100k"},
		".avi":  {"-c:v", "mjpeg"},
	}
	for ext, enc := range encoders {
		format, ok := StampFormat("clips/x/full" + strings.ToUpper(ext))
		if !ok {
			t.Fatalf("%s refused", ext)
		}
		src, dst := filepath.Join(dir, "src"+ext), filepath.Join(dir, "dst"+ext)
		args := append([]string{"-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1"}, enc...)
		if out, err := exec.Command("ffmpeg", append(args, src)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: make source: %v %s", ext, err, out)
		}
		if err := Stamp(ctx, src, dst, format, comment); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", dst).Output()
		if err != nil {
			t.Fatalf("%s: ffprobe: %v", ext, err)
		}
		if !strings.Contains(strings.ToLower(string(out)), "tag:comment="+strings.ToLower(comment)) {
			t.Fatalf("%s: tags %q lack the comment", ext, out)
		}
	}
	for _, key := range []string{"clips/x/full.gif", "clips/x/full.jpg", "clips/x/full.png", "clips/x/full"} {
		if f, ok := StampFormat(key); ok {
			t.Fatalf("%s accepted as %s", key, f)
		}
	}
}
