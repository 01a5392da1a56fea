package media

import (
	"context"
	"path"
	"strings"
)

// stampFormats are the containers whose metadata a remux can carry a text
// in, by the extension of the stored file, with ffmpeg's muxer for each.
// The picture formats (GIF, JPEG, PNG) have none that ffmpeg writes.
var stampFormats = map[string]string{
	".mp4": "mp4", ".m4v": "mp4", ".mov": "mov",
	".webm": "webm", ".mkv": "matroska", ".avi": "avi",
}

// StampFormat is ffmpeg's muxer for the file under key when its container
// can carry a stamp (ok false: it cannot, the original is served as it is).
func StampFormat(key string) (format string, ok bool) {
	format, ok = stampFormats[strings.ToLower(path.Ext(key))]
	return format, ok
}

// Stamp copies src (a path or URL) to dst with every stream as it is (no
// re-encode: -c copy) and comment in the container's metadata: a QuickTime
// ©cmt (MP4, MOV), a Matroska COMMENT tag (WebM, MKV) or an AVI ICMT, all of
// which ffprobe reads back as the format's "comment" tag. The other global
// tags of the original are kept. MP4 and MOV get their index at the front
// (faststart), so players start before the whole file is in. format is
// StampFormat's.
func Stamp(ctx context.Context, src, dst, format, comment string) error {
	args := []string{"-y", "-v", "error", "-i", src, "-map", "0", "-c", "copy",
		"-map_metadata", "0", "-metadata", "comment=" + comment}
	if format == "mp4" || format == "mov" {
		args = append(args, "-movflags", "+faststart")
	}
	args = append(args, "-f", format, dst)
	return RunFFmpeg(ctx, src, args...)
}
