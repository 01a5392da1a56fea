package demo

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"broll/catalog"
	"broll/catalog/media"
)

// Demo media is small but real. Where ffmpeg is installed (the local stack
// installs it), the full file is a short H.264 MP4 of one of ffmpeg's test
// sources, tinted per variant, and the preview is made from it as the
// worker makes previews (media.MakePreview): what `make run` shows and sells is
// real video. Without ffmpeg (the distroless image's brollctl), a Motion-JPEG
// AVI and an animated GIF drawn in Go stand in. The thumbnail is always a
// JPEG drawn in Go: a colour gradient with a shape, so clips are told apart
// at a glance.

// demoVariantsPerOrientation is how many distinct media sets are drawn per
// orientation; clips share them, which keeps seeding large counts fast.
const demoVariantsPerOrientation = 8

const (
	demoAVIFrames = 15 // 1.5 s at demoAVIFPS
	demoAVIFPS    = 10
	demoGIFFrames = 8
	demoGIFDelay  = 12 // hundredths of a second per frame
)

// demoSize gives the pixel size of a kind of demo file ("thumbnail",
// "preview" or "full") in an orientation. The full file is smaller than the
// thumbnail on purpose: it has fifteen frames to carry.
func demoSize(orientation, kind string) (int, int) {
	long, short := 256, 144
	switch kind {
	case "video":
		long, short = 426, 240
	case "thumbnail":
		long, short = 320, 180
	case "preview":
		long, short = 160, 90
	}
	switch orientation {
	case "vertical":
		return short, long
	case "square":
		return short * 4 / 3, short * 4 / 3
	}
	return long, short
}

// demoVariant describes one look: the gradient's hues and the shape.
type demoVariant struct {
	orientation string
	hue         float64 // 0-360
	shape       int     // 0 circle, 1 square, 2 diamond, 3 ring
}

// demoFiles are the paths of one variant's files.
type demoFiles struct {
	Thumbnail, Preview, Full string
}

// writeDemoMedia draws every variant into dir and returns the file sets by
// orientation.
func writeDemoMedia(dir string) (map[string][]demoFiles, error) {
	_, err := exec.LookPath("ffmpeg")
	ffmpeg := err == nil
	slots := make(chan struct{}, runtime.GOMAXPROCS(0)*2)
	out := map[string][]demoFiles{}
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	for oi, o := range catalog.Orientations() {
		out[o] = make([]demoFiles, demoVariantsPerOrientation)
		for i := range demoVariantsPerOrientation {
			n := oi*demoVariantsPerOrientation + i
			v := demoVariant{
				orientation: o,
				hue:         math.Mod(float64(n)*137.5, 360), // golden angle: hues far apart
				shape:       n % 4,
			}
			base := filepath.Join(dir, fmt.Sprintf("%s-%d", o, i))
			files := demoFiles{Thumbnail: base + ".jpg", Preview: base + ".gif", Full: base + ".avi"}
			if ffmpeg {
				// One rendered video per source and orientation, shared by
				// the variants (their thumbnails differ): seeding stays a
				// few seconds.
				shared := filepath.Join(dir, fmt.Sprintf("%s-%d", o, i%len(demoSources)))
				files.Preview, files.Full = shared+"-preview.mp4", shared+".mp4"
				if i >= len(demoSources) {
					files.Preview, files.Full = "", ""
				}
			}
			out[o][i] = files
			wg.Go(func() {
				// ffmpeg is a process per file: a few at a time.
				slots <- struct{}{}
				defer func() { <-slots }()
				if err := writeDemoVariant(v, files, n); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("demo media: %w", errs[0])
	}
	for _, o := range catalog.Orientations() {
		for i, f := range out[o] {
			if f.Full == "" {
				out[o][i].Full, out[o][i].Preview = out[o][i%len(demoSources)].Full, out[o][i%len(demoSources)].Preview
			}
		}
	}
	return out, nil
}

func writeDemoVariant(v demoVariant, files demoFiles, n int) error {
	var thumb, preview, full bytes.Buffer
	w, h := demoSize(v.orientation, "thumbnail")
	thumbImg := drawDemoFrame(v, demoBackground(v, w, h), 0.35)
	if err := jpeg.Encode(&thumb, thumbImg, &jpeg.Options{Quality: 80}); err != nil {
		return err
	}
	if files.Full == "" || strings.HasSuffix(files.Full, ".mp4") {
		if err := os.WriteFile(files.Thumbnail, thumb.Bytes(), 0o644); err != nil {
			return err
		}
		if files.Full == "" {
			return nil // shares the video of another variant
		}
		return renderDemoVideo(v, files, n)
	}
	if err := encodeDemoGIF(&preview, v); err != nil {
		return err
	}
	if err := encodeDemoAVI(&full, v); err != nil {
		return err
	}
	for path, b := range map[string][]byte{files.Thumbnail: thumb.Bytes(), files.Preview: preview.Bytes(), files.Full: full.Bytes()} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func encodeDemoGIF(w io.Writer, v demoVariant) error {
	width, height := demoSize(v.orientation, "preview")
	pal := colorCube()
	bg := demoBackground(v, width, height)
	anim := &gif.GIF{LoopCount: 0}
	for i := range demoGIFFrames {
		frame := drawDemoFrame(v, bg, float64(i)/demoGIFFrames)
		anim.Image = append(anim.Image, toColorCube(frame, pal))
		anim.Delay = append(anim.Delay, demoGIFDelay)
	}
	return gif.EncodeAll(w, anim)
}

// demoSources are ffmpeg's test sources the variants take turns with,
// each at its own length and frame rate, so that the demo catalog's
// durations spread (its lines state their files' figures, see Seed).
var demoSources = []struct {
	name    string
	seconds string
	rate    int
}{{"testsrc2", "3", 25}, {"smptehdbars", "7.5", 30}, {"testsrc", "12", 24}}

// renderDemoVideo renders the variant's full file with ffmpeg (H.264,
// tinted by the variant's hue, its source's length and rate) and its
// preview from it.
func renderDemoVideo(v demoVariant, files demoFiles, n int) error {
	w, h := demoSize(v.orientation, "video")
	ctx := context.Background()
	s := demoSources[n%len(demoSources)]
	src := fmt.Sprintf("%s=size=%dx%d:rate=%d", s.name, w, h, s.rate)
	if err := media.RunFFmpeg(ctx, "", "-y", "-v", "error", "-f", "lavfi", "-i", src, "-t", s.seconds,
		"-vf", fmt.Sprintf("hue=h=%.0f,format=yuv420p", v.hue), "-c:v", "libx264", "-preset", "veryfast",
		"-crf", "32", "-movflags", "+faststart", files.Full); err != nil {
		return err
	}
	return media.MakePreview(ctx, files.Full, files.Preview)
}

// colorCube is a 6x6x6 palette, index r*36 + g*6 + b. Mapping a pixel onto
// it is arithmetic, where a search of a general palette per pixel would
// make the preview the slowest part of seeding.
func colorCube() color.Palette {
	p := make(color.Palette, 0, 216)
	for r := range 6 {
		for g := range 6 {
			for b := range 6 {
				p = append(p, color.RGBA{uint8(r * 51), uint8(g * 51), uint8(b * 51), 255})
			}
		}
	}
	return p
}

// toColorCube maps to the nearest cube colour without dithering: banding
// is fine for a preview and keeps the LZW stream, and the file, small.
func toColorCube(img *image.RGBA, pal color.Palette) *image.Paletted {
	p := image.NewPaletted(img.Bounds(), pal)
	q := func(v uint8) int { return (int(v) + 25) / 51 }
	for i := 0; i < len(img.Pix); i += 4 {
		p.Pix[i/4] = uint8(q(img.Pix[i])*36 + q(img.Pix[i+1])*6 + q(img.Pix[i+2]))
	}
	return p
}

func encodeDemoAVI(w io.Writer, v demoVariant) error {
	width, height := demoSize(v.orientation, "full")
	bg := demoBackground(v, width, height)
	frames := make([][]byte, demoAVIFrames)
	for i := range frames {
		var b bytes.Buffer
		img := drawDemoFrame(v, bg, float64(i)/demoAVIFrames)
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 70}); err != nil {
			return err
		}
		frames[i] = b.Bytes()
	}
	return writeMJPEGAVI(w, width, height, demoAVIFPS, frames)
}

// demoBackground draws the variant's diagonal gradient once per size;
// every frame starts from a copy of it.
func demoBackground(v demoVariant, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	from := hsv(v.hue, 0.65, 0.95)
	to := hsv(v.hue+70, 0.8, 0.45)
	for y := range h {
		row := img.Pix[y*img.Stride:]
		for x := range w {
			f := (float64(x)/float64(w) + float64(y)/float64(h)) / 2
			px := row[4*x : 4*x+4]
			px[0], px[1], px[2], px[3] = lerp8(from.R, to.R, f), lerp8(from.G, to.G, f), lerp8(from.B, to.B, f), 255
		}
	}
	return img
}

// drawDemoFrame draws the variant at time t in [0, 1) over its background:
// a shape crossing the frame on a wave, and a progress bar along the bottom.
func drawDemoFrame(v demoVariant, bg *image.RGBA, t float64) *image.RGBA {
	img := &image.RGBA{Pix: slices.Clone(bg.Pix), Stride: bg.Stride, Rect: bg.Rect}
	w, h := bg.Rect.Dx(), bg.Rect.Dy()
	size := float64(min(w, h)) / 5
	cx := float64(w) * (0.2 + 0.6*t)
	cy := float64(h)/2 + math.Sin(t*2*math.Pi)*float64(h)/6
	ink := hsv(v.hue+180, 0.35, 1)
	for y := max(0, int(cy-size)); y < min(h, int(cy+size)+1); y++ {
		for x := max(0, int(cx-size)); x < min(w, int(cx+size)+1); x++ {
			if insideShape(v.shape, float64(x)-cx, float64(y)-cy, size) {
				img.SetRGBA(x, y, ink)
			}
		}
	}
	bar := max(2, h/40)
	draw.Draw(img, image.Rect(0, h-bar, int(float64(w)*(t+1.0/demoAVIFrames)), h),
		image.NewUniform(color.RGBA{255, 255, 255, 220}), image.Point{}, draw.Over)
	return img
}

func insideShape(shape int, dx, dy, r float64) bool {
	switch shape {
	case 1:
		return math.Abs(dx) <= r*0.8 && math.Abs(dy) <= r*0.8
	case 2:
		return math.Abs(dx)+math.Abs(dy) <= r
	case 3:
		d := math.Hypot(dx, dy)
		return d <= r && d >= r*0.6
	}
	return math.Hypot(dx, dy) <= r
}

func lerp8(a, b uint8, f float64) uint8 {
	return uint8(float64(a) + (float64(b)-float64(a))*f + 0.5)
}

// hsv converts a hue in degrees and saturation/value in [0, 1] to RGB.
func hsv(h, s, v float64) color.RGBA {
	h = math.Mod(math.Mod(h, 360)+360, 360) / 60
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h, 2)-1))
	var r, g, b float64
	switch int(h) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := v - c
	return color.RGBA{uint8((r + m) * 255), uint8((g + m) * 255), uint8((b + m) * 255), 255}
}

// writeMJPEGAVI writes JPEG frames as an AVI 1.0 file: RIFF 'AVI ' holding
// the header list (main header, one video stream 'vids'/'MJPG' with its
// BITMAPINFOHEADER), the 'movi' list of '00dc' frame chunks and the 'idx1'
// index that players use to seek.
func writeMJPEGAVI(w io.Writer, width, height, fps int, frames [][]byte) error {
	if len(frames) == 0 || fps <= 0 {
		return fmt.Errorf("avi: need frames and a frame rate")
	}
	maxFrame := 0
	moviSize := 4 // 'movi'
	for _, f := range frames {
		maxFrame = max(maxFrame, len(f))
		moviSize += 8 + len(f) + len(f)%2
	}
	const avihSize, strhSize, strfSize = 56, 56, 40
	strlSize := 4 + 8 + strhSize + 8 + strfSize
	hdrlSize := 4 + 8 + avihSize + 8 + strlSize
	idxSize := 16 * len(frames)
	riffSize := 4 + 8 + hdrlSize + 8 + moviSize + 8 + idxSize

	b := make([]byte, 0, 8+riffSize)
	le := binary.LittleEndian
	u32 := func(v int) { b = le.AppendUint32(b, uint32(v)) }
	u16 := func(v int) { b = le.AppendUint16(b, uint16(v)) }
	cc := func(s string) { b = append(b, s...) }

	cc("RIFF")
	u32(riffSize)
	cc("AVI ")

	cc("LIST")
	u32(hdrlSize)
	cc("hdrl")
	cc("avih")
	u32(avihSize)
	u32(1_000_000 / fps) // microseconds per frame
	u32(maxFrame * fps)  // max bytes per second
	u32(0)               // padding granularity
	u32(0x10)            // AVIF_HASINDEX
	u32(len(frames))     // total frames
	u32(0)               // initial frames
	u32(1)               // streams
	u32(maxFrame)        // suggested buffer size
	u32(width)
	u32(height)
	u32(0)
	u32(0)
	u32(0)
	u32(0)

	cc("LIST")
	u32(strlSize)
	cc("strl")
	cc("strh")
	u32(strhSize)
	cc("vids")
	cc("MJPG")
	u32(0)           // flags
	u16(0)           // priority
	u16(0)           // language
	u32(0)           // initial frames
	u32(1)           // scale
	u32(fps)         // rate: rate/scale frames per second
	u32(0)           // start
	u32(len(frames)) // length in frames
	u32(maxFrame)    // suggested buffer size
	u32(-1)          // quality: default
	u32(0)           // sample size: varies per frame
	u16(0)           // rcFrame left, top, right, bottom
	u16(0)
	u16(width)
	u16(height)
	cc("strf")
	u32(strfSize)
	u32(strfSize) // biSize
	u32(width)
	u32(height)
	u16(1)  // planes
	u16(24) // bit count
	cc("MJPG")
	u32(width * height * 3) // image size
	u32(0)                  // x pixels per metre
	u32(0)                  // y pixels per metre
	u32(0)                  // colours used
	u32(0)                  // important colours

	cc("LIST")
	u32(moviSize)
	moviStart := len(b)
	cc("movi")
	offsets := make([]int, len(frames))
	for i, f := range frames {
		offsets[i] = len(b) - moviStart // idx1 offsets count from the 'movi' tag
		cc("00dc")
		u32(len(f))
		b = append(b, f...)
		if len(f)%2 == 1 {
			b = append(b, 0) // chunks are word-aligned
		}
	}

	cc("idx1")
	u32(idxSize)
	for i, f := range frames {
		cc("00dc")
		u32(0x10) // AVIIF_KEYFRAME: every MJPEG frame stands alone
		u32(offsets[i])
		u32(len(f))
	}
	if len(b) != 8+riffSize {
		return fmt.Errorf("avi: wrote %d bytes, expected %d", len(b), 8+riffSize)
	}
	_, err := w.Write(b)
	return err
}
