package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"
)

// Probe is what ffprobe reads from a file.
type Probe struct {
	MediaType string // video or image
	Duration  float64
	FPS       float64
	// Width and Height are the picture as a player shows it: the display
	// matrix applied (a phone's landscape pixels turned upright).
	Width  int
	Height int
	// Rotation is the clockwise turn, in degrees (0 to 359), that the
	// display matrix gives the stored picture.
	Rotation int
	// TrailingBytes counts bytes after the last complete box of an MP4 or
	// QuickTime file that form no box: players skip them, and so does
	// the probe (the file is sound without them).
	TrailingBytes int64
}

// Orientation follows from the frame's sides.
func (p Probe) Orientation() string {
	switch {
	case p.Width > p.Height:
		return "horizontal"
	case p.Width < p.Height:
		return "vertical"
	}
	return "square"
}

// UnreadableError is a file the probe cannot read as a video or an image:
// retrying will not help, the clip is marked failed with Reason.
type UnreadableError struct{ Reason string }

func (e *UnreadableError) Error() string { return "media unreadable: " + e.Reason }

// maxProbeOutput bounds what ffprobe may print (its JSON for one file is a
// few kilobytes).
const maxProbeOutput = 1 << 20

// ProbeFile runs ffprobe on src (a path or URL).
func ProbeFile(ctx context.Context, src string) (Probe, error) {
	cmd := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-print_format", "json",
		"-show_format", "-show_streams", "-select_streams", "v:0", src)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &out, n: maxProbeOutput}, &limitedBuffer{b: &stderr, n: 4096}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && ctx.Err() == nil {
			// The source may be a presigned URL: never repeat it.
			msg := strings.ReplaceAll(stderr.String(), src, "the file")
			return Probe{}, &UnreadableError{Reason: firstLine(msg, "ffprobe could not read the file")}
		}
		return Probe{}, fmt.Errorf("ffprobe: %w", err)
	}
	var doc struct {
		Streams []struct {
			CodecType    string `json:"codec_type"`
			Width        int    `json:"width"`
			Height       int    `json:"height"`
			AvgFrameRate string `json:"avg_frame_rate"`
			RFrameRate   string `json:"r_frame_rate"`
			SideData     []struct {
				Rotation *float64 `json:"rotation"`
			} `json:"side_data_list"`
		} `json:"streams"`
		Format struct {
			FormatName string `json:"format_name"`
			Duration   string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		return Probe{}, fmt.Errorf("ffprobe output: %w", err)
	}
	if len(doc.Streams) == 0 || doc.Streams[0].Width <= 0 || doc.Streams[0].Height <= 0 {
		return Probe{}, &UnreadableError{Reason: "the file holds no picture (no video stream)"}
	}
	st := doc.Streams[0]
	p := Probe{MediaType: "video", Width: st.Width, Height: st.Height}
	for _, sd := range st.SideData {
		if sd.Rotation != nil {
			p.Rotation = clockwise(*sd.Rotation)
			break
		}
	}
	if p.Rotation == 90 || p.Rotation == 270 {
		p.Width, p.Height = p.Height, p.Width
	}
	name := doc.Format.FormatName
	if name == "image2" || strings.HasSuffix(name, "_pipe") {
		p.MediaType = "image"
		return p, nil
	}
	p.Duration, _ = strconv.ParseFloat(doc.Format.Duration, 64)
	p.Duration = math.Round(p.Duration*1000) / 1000
	p.FPS = frameRate(st.AvgFrameRate)
	if p.FPS == 0 {
		p.FPS = frameRate(st.RFrameRate)
	}
	if p.Duration <= 0 || math.IsNaN(p.Duration) {
		return Probe{}, &UnreadableError{Reason: "the video has no duration"}
	}
	return p, nil
}

// CheckDecodes decodes the whole file src (a path or URL) with ffmpeg,
// stopping at the first error: a video ffprobe read from its headers may
// still be cut short or damaged (a Matroska or fragmented MP4 file cut in
// half passes ffprobe). A file that fails is an *UnreadableError. This is
// the probe's reference: what ffmpeg decodes whole is sound.
func CheckDecodes(ctx context.Context, src string) error {
	cmd := exec.CommandContext(ctx, "ffmpeg", "-nostdin", "-v", "error", "-xerror", "-i", src,
		"-f", "null", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4096}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && ctx.Err() == nil {
			msg := strings.ReplaceAll(stderr.String(), src, "the file")
			return &UnreadableError{Reason: "the file does not decode whole: " + firstLine(msg, "ffmpeg stopped at an error")}
		}
		return fmt.Errorf("ffmpeg: %w", err)
	}
	return nil
}

// clockwise turns ffprobe's display matrix rotation (counterclockwise
// degrees, -180 to 180) into the clockwise turn a player gives the
// picture, 0 to 359, as ffmpeg's own autorotation does.
func clockwise(rotation float64) int {
	if math.IsNaN(rotation) || math.IsInf(rotation, 0) {
		return 0
	}
	turn := math.Mod(-math.Round(rotation), 360)
	if turn < 0 {
		turn += 360
	}
	return int(turn)
}

// frameRate reads ffprobe's "30000/1001", rounded to 3 decimals.
func frameRate(s string) float64 {
	a, b, ok := strings.Cut(s, "/")
	n, err1 := strconv.ParseFloat(a, 64)
	d := 1.0
	var err2 error
	if ok {
		d, err2 = strconv.ParseFloat(b, 64)
	}
	if err1 != nil || err2 != nil || d == 0 || n <= 0 {
		return 0
	}
	return math.Round(n/d*1000) / 1000
}

func firstLine(s, fallback string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	if s == "" {
		return fallback
	}
	return s
}

// limitedBuffer keeps the first n bytes written and drops the rest, so a
// runaway child cannot fill memory.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Preview limits: what anyone may watch before buying.
const (
	PreviewMaxSeconds = 10
	PreviewLongSide   = 480
)

// scaleFilter fits the picture into PreviewLongSide on its long side,
// never enlarging it, with even sides as H.264 needs.
const scaleFilter = "scale=w='if(gte(iw,ih),min(480,iw),-2)':h='if(gte(iw,ih),-2,min(480,ih))'"

// watermarkFilter lays a translucent band across the middle of the
// picture: a preview is for choosing, not for use. (A band needs no font,
// which drawtext would.)
const watermarkFilter = "drawbox=x=0:y=ih*0.42:w=iw:h=ih*0.16:color=white@0.45:t=fill"

// MakePreview writes a watermarked H.264 MP4 of at most PreviewMaxSeconds
// and PreviewLongSide pixels from src to dst.
func MakePreview(ctx context.Context, src, dst string) error {
	return RunFFmpeg(ctx, src, "-y", "-v", "error", "-t", strconv.Itoa(PreviewMaxSeconds), "-i", src,
		"-t", strconv.Itoa(PreviewMaxSeconds), "-an", "-vf", scaleFilter+","+watermarkFilter,
		"-c:v", "libx264", "-preset", "veryfast", "-crf", "30", "-pix_fmt", "yuv420p",
		"-movflags", "+faststart", "-f", "mp4", dst)
}

// MakeThumbnail writes a JPEG of the frame at second at (the first frame
// of an image) to dst.
func MakeThumbnail(ctx context.Context, src, dst string, at float64) error {
	return RunFFmpeg(ctx, src, "-y", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 2, 64), "-i", src,
		"-frames:v", "1", "-vf", scaleFilter, "-q:v", "4", "-f", "image2", "-c:v", "mjpeg", dst)
}

// RunFFmpeg runs ffmpeg with args; its error names neither src nor dst
// (src may be a presigned URL).
func RunFFmpeg(ctx context.Context, src string, args ...string) error {
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, n: 4096}
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if src != "" {
			msg = strings.ReplaceAll(msg, src, "the file")
		}
		return fmt.Errorf("ffmpeg: %w: %s", err, firstLine(msg, ""))
	}
	return nil
}
