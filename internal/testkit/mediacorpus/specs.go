package mediacorpus

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Encoders and sources: tiny pictures, one second, 10 fps.
var (
	h264 = []string{"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"}
	hevc = []string{"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-pix_fmt", "yuv420p"}
	vp9  = []string{"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "50k", "-pix_fmt", "yuv420p"}
	aac  = []string{"-c:a", "aac", "-b:a", "32k"}
)

// picture is ffmpeg's test source of size at rate for seconds.
func picture(size, rate, seconds string) []string {
	return []string{"-f", "lavfi", "-i", "testsrc=size=" + size + ":rate=" + rate + ":duration=" + seconds}
}

// tone is a sine of seconds, as a second input.
func tone(seconds string) []string {
	return []string{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050:duration=" + seconds}
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// base is a file ffmpeg makes from its sources.
func base(name, ext string, args ...[]string) spec {
	return spec{name: name, ext: ext, args: cat(args...)}
}

// remux is from's streams copied into ext with extra options.
func remux(name, ext, from string, extra ...string) spec {
	return spec{name: name, ext: ext, from: from, args: cat([]string{"-map", "0", "-c", "copy"}, extra)}
}

// derived is from's bytes changed by f (key names the change).
func derived(name, ext, from, key string, f func([]byte) []byte) spec {
	return spec{name: name, ext: ext, from: from, derive: f, deriveKey: key}
}

// cut keeps the first n bytes (n below zero: all but the last -n; a
// fraction in (0, 1): that share of the file).
func cut(name, ext, from string, n float64) spec {
	return derived(name, ext, from, fmt.Sprintf("cut %g", n), func(b []byte) []byte {
		switch {
		case n < 0:
			return b[:max(0, len(b)+int(n))]
		case n < 1:
			return b[:int(float64(len(b))*n)]
		}
		return b[:min(len(b), int(n))]
	})
}

// appended is from followed by tail.
func appended(name, ext, from, key string, tail []byte) spec {
	return derived(name, ext, from, "append "+key, func(b []byte) []byte { return append(b, tail...) })
}

// matrix writes a b / c d (16.16) into the first track header's matrix.
func matrix(name, from string, a, b, c, d int32) spec {
	return derived(name, ".mp4", from, fmt.Sprintf("matrix %d %d %d %d", a, b, c, d), func(f []byte) []byte {
		i := bytes.Index(f, []byte("tkhd"))
		if i < 0 || f[i+4] != 0 {
			return f // not version 0: left as it is (the comparison still holds)
		}
		m := i + 4 + 4 + 20 + 8 + 8 // version+flags, times/id/duration, reserved, layer/group/volume/reserved
		for k, v := range []int32{a, b, 0, c, d} {
			binary.BigEndian.PutUint32(f[m+4*k:], uint32(v))
		}
		return f
	})
}

// zeroed overwrites from's movie box with zeros.
func zeroed(name, from string) spec {
	return derived(name, ".mp4", from, "zero moov", func(b []byte) []byte {
		if i := bytes.Index(b, []byte("moov")); i >= 0 {
			clear(b[i+4:])
		}
		return b
	})
}

// noise is n bytes from a fixed seed: the same file on every run.
func noise(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

const one = 1 << 16

// specs is the corpus.
func specs() []spec {
	text := bytes.Repeat([]byte("uploaded by tool 1.2; "), 140)[:3072]
	s := []spec{
		// MP4 / H.264: the index at the end and at the front.
		base("mp4-h264", ".mp4", picture("64x36", "10", "1"), h264),
		remux("mp4-h264-faststart", ".mp4", "mp4-h264", "-movflags", "+faststart"),
		base("mp4-h264-ntsc", ".mp4", picture("64x36", "30000/1001", "1"), h264),
		base("mp4-h264-vertical", ".mp4", picture("36x64", "10", "1"), h264),
		base("mp4-h264-odd-size", ".mp4", picture("65x37", "10", "1"), h264[:4], []string{"-pix_fmt", "yuv444p"}),
		base("mp4-h264-10bit", ".mp4", picture("64x36", "10", "1"), h264[:4], []string{"-pix_fmt", "yuv420p10le"}),
		base("mp4-h264-bframes", ".mp4", picture("64x36", "10", "1"), []string{"-c:v", "libx264", "-preset", "fast", "-bf", "3", "-pix_fmt", "yuv420p"}),
		base("mp4-h264-vfr", ".mp4", picture("64x36", "10", "2"), []string{"-vf", "select='lt(mod(n,5),2)'", "-vsync", "vfr"}, h264),
		base("mp4-mpeg4", ".mp4", picture("64x36", "10", "1"), []string{"-c:v", "mpeg4"}),
		// Display turns: ffmpeg's rotate tag and matrices written in.
		remux("mp4-h264-rotate90", ".mp4", "mp4-h264", "-metadata:s:v:0", "rotate=90"),
		remux("mp4-h264-rotate180", ".mp4", "mp4-h264", "-metadata:s:v:0", "rotate=180"),
		remux("mp4-h264-rotate270", ".mp4", "mp4-h264", "-metadata:s:v:0", "rotate=270"),
		remux("mp4-h264-rotate90-faststart", ".mp4", "mp4-h264", "-metadata:s:v:0", "rotate=90", "-movflags", "+faststart"),
		remux("mp4-h264-odd-size-rotate90", ".mp4", "mp4-h264-odd-size", "-metadata:s:v:0", "rotate=90"),
		matrix("mp4-h264-mirrored", "mp4-h264", -one, 0, 0, one),
		matrix("mp4-h264-mirrored-upside-down", "mp4-h264", one, 0, 0, -one),
		matrix("mp4-h264-mirrored-turned", "mp4-h264", 0, one, one, 0),
		matrix("mp4-h264-turned-clockwise", "mp4-h264", 0, one, -one, 0),
		// Sound with the picture, edit lists.
		base("mp4-h264-aac", ".mp4", picture("64x36", "10", "1"), tone("1"), h264, aac, []string{"-shortest"}),
		base("mp4-h264-aac-longer-sound", ".mp4", picture("64x36", "10", "1"), tone("1.5"), h264, aac),
		remux("mp4-h264-aac-rotate90-faststart", ".mp4", "mp4-h264-aac", "-metadata:s:v:0", "rotate=90", "-movflags", "+faststart"),
		remux("mp4-h264-edit-delayed", ".mp4", "mp4-h264", "-output_ts_offset", "0.5"),
		remux("mp4-h264-edit-trimmed", ".mp4", "mp4-h264-bframes", "-ss", "0.35"),
		base("m4a-sound-only", ".m4a", tone("1"), aac),
		// HEVC under both sample entry names, VP9 in MP4.
		base("mp4-hevc-hvc1", ".mp4", picture("64x36", "10", "1"), hevc, []string{"-tag:v", "hvc1"}),
		base("mp4-hevc-hev1", ".mp4", picture("64x36", "10", "1"), hevc, []string{"-tag:v", "hev1"}),
		base("mp4-hevc-10bit", ".mp4", picture("64x36", "10", "1"), hevc[:6], []string{"-pix_fmt", "yuv420p10le", "-tag:v", "hvc1"}),
		remux("mp4-hevc-hvc1-rotate270", ".mp4", "mp4-hevc-hvc1", "-metadata:s:v:0", "rotate=270"),
		remux("mp4-hevc-hev1-rotate90-faststart", ".mp4", "mp4-hevc-hev1", "-metadata:s:v:0", "rotate=90", "-movflags", "+faststart"),
		base("mp4-vp9", ".mp4", picture("64x36", "10", "1"), vp9),
		// QuickTime.
		base("mov-h264", ".mov", picture("64x36", "10", "1"), h264),
		remux("mov-h264-faststart", ".mov", "mov-h264", "-movflags", "+faststart"),
		remux("mov-h264-rotate90", ".mov", "mov-h264", "-metadata:s:v:0", "rotate=90"),
		base("mov-hevc-hvc1", ".mov", picture("64x36", "10", "1"), hevc, []string{"-tag:v", "hvc1"}),
		// Fragmented MP4.
		remux("fmp4-h264", ".mp4", "mp4-h264", "-movflags", "frag_keyframe+empty_moov"),
		remux("fmp4-h264-dash", ".mp4", "mp4-h264-aac", "-movflags", "frag_keyframe+empty_moov+default_base_moof"),
		remux("fmp4-h264-rotate90", ".mp4", "mp4-h264", "-metadata:s:v:0", "rotate=90", "-movflags", "frag_keyframe+empty_moov"),
		base("fmp4-h264-every-frame", ".mp4", picture("64x36", "10", "1"), h264, []string{"-movflags", "frag_every_frame+empty_moov"}),
		// WebM, Matroska, AVI.
		base("webm-vp9", ".webm", picture("64x36", "10", "1"), vp9),
		base("webm-vp9-opus", ".webm", picture("64x36", "10", "1"), tone("1"), vp9, []string{"-c:a", "libopus", "-b:a", "16k", "-shortest"}),
		base("webm-vp9-10bit", ".webm", picture("64x36", "10", "1"), vp9[:8], []string{"-pix_fmt", "yuv420p10le"}),
		base("webm-vp9-vertical", ".webm", picture("36x64", "10", "1"), vp9),
		remux("mkv-h264", ".mkv", "mp4-h264"),
		remux("mkv-hevc", ".mkv", "mp4-hevc-hvc1"),
		remux("mkv-h264-aac", ".mkv", "mp4-h264-aac"),
		remux("mkv-vp9", ".mkv", "webm-vp9"),
		base("avi-mpeg4", ".avi", picture("64x36", "10", "1"), []string{"-c:v", "mpeg4"}),
		base("avi-mjpeg", ".avi", picture("64x36", "10", "1"), []string{"-c:v", "mjpeg", "-pix_fmt", "yuvj420p"}),
		// Pictures and files that are no video.
		base("jpeg", ".jpg", picture("64x36", "1", "1"), []string{"-frames:v", "1", "-pix_fmt", "yuvj420p"}),
		base("png", ".png", picture("64x36", "1", "1"), []string{"-frames:v", "1"}),
		base("png-odd-size", ".png", picture("33x17", "1", "1"), []string{"-frames:v", "1"}),
		derived("text", ".mp4", "", "text", func([]byte) []byte { return bytes.Clone(text[:200]) }),
		derived("empty", ".mp4", "", "empty", func([]byte) []byte { return nil }),
		// Bytes after the last box: zeros (a box to the end of the file),
		// an uploader's text, noise, a few bytes.
		appended("mp4-h264-zero-padding", ".mp4", "mp4-h264", "zeros 4096", make([]byte, 4096)),
		appended("mp4-h264-faststart-zero-padding", ".mp4", "mp4-h264-faststart", "zeros 512", make([]byte, 512)),
		appended("mp4-h264-trailing-text", ".mp4", "mp4-h264", "text", text),
		appended("mp4-h264-faststart-trailing-text", ".mp4", "mp4-h264-faststart", "text", text),
		appended("mp4-h264-rotate90-trailing-text", ".mp4", "mp4-h264-rotate90", "text", text),
		appended("mp4-h264-trailing-noise", ".mp4", "mp4-h264-aac", "noise 3000", noise(3000, 7)),
		appended("mp4-h264-trailing-3-bytes", ".mp4", "mp4-h264-faststart", "abc", []byte("abc")),
		appended("mov-h264-trailing-text", ".mov", "mov-h264", "text", text),
		// Cuts at several offsets.
		cut("mp4-h264-cut-8", ".mp4", "mp4-h264", 8),
		cut("mp4-h264-cut-header", ".mp4", "mp4-h264-faststart", 40),
		cut("mp4-h264-cut-quarter", ".mp4", "mp4-h264", 0.25),
		cut("mp4-h264-cut-half", ".mp4", "mp4-h264", 0.5),
		cut("mp4-h264-faststart-cut-half", ".mp4", "mp4-h264-faststart", 0.5),
		cut("mp4-h264-faststart-cut-tail", ".mp4", "mp4-h264-faststart", -40),
		cut("mp4-h264-faststart-cut-1", ".mp4", "mp4-h264-faststart", -1),
		cut("mp4-h264-cut-in-moov", ".mp4", "mp4-h264", -300),
		cut("mp4-hevc-hvc1-cut-half", ".mp4", "mp4-hevc-hvc1", 0.5),
		cut("mov-h264-cut-half", ".mov", "mov-h264", 0.5),
		cut("fmp4-h264-cut-half", ".mp4", "fmp4-h264", 0.5),
		cut("fmp4-h264-cut-tail", ".mp4", "fmp4-h264", -50),
		cut("webm-vp9-cut-half", ".webm", "webm-vp9", 0.5),
		cut("webm-vp9-cut-tail", ".webm", "webm-vp9", -50),
		cut("mkv-h264-cut-half", ".mkv", "mkv-h264", 0.5),
		cut("mkv-h264-cut-tail", ".mkv", "mkv-h264", -50),
		cut("avi-mpeg4-cut-half", ".avi", "avi-mpeg4", 0.5),
		cut("jpeg-cut-half", ".jpg", "jpeg", 0.5),
		zeroed("mp4-h264-moov-zeroed", "mp4-h264-faststart"),
	}
	stricter := map[string]string{
		"mp4-h264-cut-in-moov":     "its movie box is cut short: the reader refuses an index that is not all there",
		"mp4-h264-faststart-cut-1": "its last sample is cut short: the reader refuses a file whose samples are not all there",
	}
	for i := range s {
		s[i].stricter = stricter[s[i].name]
	}
	return s
}
