package catalog

import (
	"github.com/google/uuid"

	"broll/catalog/media"
)

// A probe's result is written on a clip's row by the media jobs (package
// catalog/mediajobs) and by an import that probed its clips itself
// (catalog/imports soundNow), through the same statement (SQLMediaDone)
// and arguments.

// Probed is one clip's probe result and the preview and thumbnail
// made for it, for sqlMediaDone.
type Probed struct {
	ID                 uuid.UUID
	Probe              media.Probe
	Preview, Thumbnail *string
}

// ProbeArgs are the probe arrays of sqlMediaDone and sqlProbedDone ($1 to
// $7) for clips, and the trailing bytes, which go last.
func ProbeArgs(clips []Probed) (args []any, trailing []int64) {
	n := len(clips)
	ids, types, orients := make([]uuid.UUID, n), make([]string, n), make([]string, n)
	durs, fpss := make([]*float64, n), make([]*float64, n)
	widths, heights := make([]int, n), make([]int, n)
	trailing = make([]int64, n)
	for i, c := range clips {
		p := c.Probe
		ids[i], types[i], orients[i], widths[i], heights[i] = c.ID, p.MediaType, p.Orientation(), p.Width, p.Height
		if p.MediaType == "video" {
			durs[i], fpss[i] = &p.Duration, &p.FPS
		}
		if p.Width == 0 || p.Height == 0 {
			orients[i] = "" // unknown: the line's stays
		}
		trailing[i] = trailingBytes(p)
	}
	return []any{ids, types, orients, durs, widths, heights, fpss}, trailing
}

// trailingBytes is how many bytes after the file's last box the probe
// tolerated (stored in media_trailing_bytes, shown by `clips status`).
func trailingBytes(p media.Probe) int64 { return p.TrailingBytes }

// MediaDoneArgs are sqlMediaDone's arguments for clips.
func MediaDoneArgs(clips []Probed) []any {
	args, trailing := ProbeArgs(clips)
	previews, thumbs := make([]*string, len(clips)), make([]*string, len(clips))
	for i, c := range clips {
		previews[i], thumbs[i] = c.Preview, c.Thumbnail
	}
	return append(args, previews, thumbs, trailing)
}

// The statement and fragments that write a probe on a clip's row, for the
// media jobs' own statements (catalog/mediajobs/queries.go).
var (
	// SQLMediaDone is sqlMediaDone, with MediaDoneArgs.
	SQLMediaDone = sqlMediaDone
	// ProbedSet is probedSet: the SET list for a probe p of the row v.
	ProbedSet = probedSet
)

// NotLive is notLive: the retired_at of a clip kept off sale by its file.
const NotLive = notLive

// ProbedRows is probedRows: the probe arrays unnested into p.
func ProbedRows(trailing string) string { return probedRows(trailing) }
