package mediajobs

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"broll/catalog/media"
	"broll/internal/testkit/mediacorpus"
)

// decoded is ffmpeg's reading of a file: whether it decodes whole with a
// picture, the size of its first decoded frame as a player shows it
// (ffmpeg turns frames by the display matrix unless told not to), and
// ffprobe's duration.
type decoded struct {
	sound         bool
	width, height int
	duration      float64
	stderr        string
}

var showinfoSize = regexp.MustCompile(`Parsed_showinfo.* s:(\d+)x(\d+) `)

// decode runs the reference: a full decode by ffmpeg that stops at the
// first error (-xerror), the first frame's size from showinfo, and
// ffprobe's format duration.
func decode(ctx context.Context, t *testing.T, path string) decoded {
	t.Helper()
	var d decoded
	cmd := exec.CommandContext(ctx, "ffmpeg", "-nostdin", "-v", "info", "-xerror", "-i", path,
		"-vf", "showinfo", "-f", "null", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("ffmpeg: %v", err)
	}
	d.stderr = stderr.String()
	if m := showinfoSize.FindStringSubmatch(d.stderr); m != nil {
		d.width, _ = strconv.Atoi(m[1])
		d.height, _ = strconv.Atoi(m[2])
	}
	d.sound = err == nil && d.width > 0
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-show_entries", "format=duration",
		"-of", "csv=p=0", path).Output()
	if err == nil {
		d.duration, _ = strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	}
	return d
}

// The probe the worker runs (the in-process reader, ffprobe for what it
// leaves) agrees with ffmpeg on every file of the corpus: it sells what
// ffmpeg decodes whole and refuses what it cannot, reports the size of
// the frames ffmpeg shows, and ffprobe's duration within one frame. The
// corpus names the files where the probe is stricter on purpose.
func TestProbeAgreesWithFFmpegOnTheCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := media.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{media: store}
	files := mediacorpus.Files(t)
	if len(files) < 60 {
		t.Fatalf("the corpus has %d files, want at least 60", len(files))
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			key := "corpus/" + f.Name + f.Ext
			if _, err := store.Put(ctx, key, bytes.NewReader(f.Bytes)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(store.Dir(), filepath.FromSlash(key))
			want := decode(ctx, t, path)
			got, err := s.probeStored(ctx, key)
			var refused *media.UnreadableError
			if err != nil && !errors.As(err, &refused) {
				t.Fatalf("probe failed without a verdict: %v", err)
			}
			sold := err == nil
			if f.Stricter != "" {
				if sold {
					t.Fatalf("probe sells %+v; want it refused: %s", got, f.Stricter)
				}
				return
			}
			if sold != want.sound {
				t.Fatalf("probe sells %v (%+v, %v); ffmpeg decodes it whole: %v\n%s",
					sold, got, err, want.sound, lastLines(want.stderr, 4))
			}
			if !sold {
				return
			}
			if got.Width != want.width || got.Height != want.height {
				t.Errorf("probe size %dx%d; ffmpeg shows %dx%d", got.Width, got.Height, want.width, want.height)
			}
			if got.MediaType == "video" {
				frame := 0.1
				if got.FPS > 0 {
					frame = 1 / got.FPS
				}
				if math.Abs(got.Duration-want.duration) > frame+0.001 {
					t.Errorf("probe duration %v s; ffprobe %v s (one frame is %.3f s)", got.Duration, want.duration, frame)
				}
			}
			// ffprobe alone reads the same picture as the in-process reader.
			if fp, err := media.ProbeFile(ctx, path); err == nil && (fp.Width != got.Width || fp.Height != got.Height) {
				t.Errorf("ffprobe path reads %dx%d, the probe %dx%d", fp.Width, fp.Height, got.Width, got.Height)
			}
		})
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
