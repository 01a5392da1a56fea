package mp4meta

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"

	mp4 "github.com/abema/go-mp4"
)

// track is what one trak box says about its samples.
type track struct {
	handler   string
	hasMedia  bool   // an mdia box
	hasHeader bool   // an mdhd box
	hasTkhd   bool   // a tkhd box
	display   matrix // tkhd
	timescale uint32 // mdhd
	duration  uint64 // in timescale units (mdhd)
	// entry is the first sample description, within the movie box
	// (nil: stsd holds none).
	entry *mp4.BoxInfo
	// The sample tables (nil: absent), only the first of each.
	hasStbl    bool
	stsd       bool
	stts       *mp4.Stts
	stsz       *mp4.Stsz
	stsc       *mp4.Stsc
	stco       *mp4.Stco
	co64       *mp4.Co64
	width      int
	height     int
	frames     uint64 // samples by the time-to-sample table
	ticks      uint64 // their total duration, in timescale units
	compactSzs bool   // stz2, which this reader leaves to ffprobe
}

// movieParser gathers, box by box, what parseMovie needs.
type movieParser struct {
	box           []byte // the movie box
	movieScale    uint32
	movieDuration uint64
	movieMatrix   matrix
	tracks        []*track
	cur           *track
}

// parseMovie reads the movie box: its header, the first video track's
// picture and timing, and every track's sample tables, whose bytes must
// lie inside the file's media data.
func parseMovie(m movie, mdats []extent) (Info, error) {
	r := bytes.NewReader(m.box)
	bi, err := mp4.ReadBoxInfo(r)
	if err != nil {
		return Info{}, damaged("moov", err)
	}
	bi.Context = m.ctx
	p := movieParser{box: m.box, movieMatrix: identity}
	if _, err := mp4.ReadBoxStructureFromInternal(r, bi, p.handle); err != nil {
		var c *CorruptError
		if errors.Is(err, ErrNotHandled) || errors.As(err, &c) {
			return Info{}, err
		}
		return Info{}, damaged("moov", err)
	}
	var info Info
	var video *track
	for _, t := range p.tracks {
		if err := t.check(r, m.ctx, mdats); err != nil {
			return Info{}, err
		}
		if t.timescale > 0 {
			info.Duration = math.Max(info.Duration, float64(t.duration)/float64(t.timescale))
		}
		if t.handler == "vide" && video == nil {
			video = t
		}
	}
	// The movie header's duration is the presentation's, edits applied (a
	// sound track's encoder priming is cut); the tracks' own lengths stand
	// in only when it has none.
	if p.movieScale > 0 && p.movieDuration > 0 {
		info.Duration = float64(p.movieDuration) / float64(p.movieScale)
	}
	info.Duration = math.Round(info.Duration*1000) / 1000
	if video == nil || video.width <= 0 || video.height <= 0 {
		return Info{}, corrupt("the file holds no picture (no video stream)")
	}
	if video.frames == 0 || video.ticks == 0 || video.timescale == 0 {
		return Info{}, corrupt("the video track has no frames")
	}
	if info.Duration <= 0 {
		return Info{}, corrupt("the video has no duration")
	}
	info.Rotation, info.Mirrored = video.display.shown(p.movieMatrix)
	info.Width, info.Height = upright(video.width, video.height, info.Rotation)
	info.Frames = int(min(video.frames, math.MaxInt32))
	info.FPS = math.Round(float64(video.frames)*float64(video.timescale)/float64(video.ticks)*1000) / 1000
	return info, nil
}

// handle is the go-mp4 read handler: it expands the boxes on the way to
// the sample tables and reads the headers and tables it meets.
func (p *movieParser) handle(h *mp4.ReadHandle) (any, error) {
	bi := h.BoxInfo
	if bi.Size < bi.HeaderSize {
		return nil, corrupt("box %s has an impossible size", bi.Type)
	}
	if len(h.Path) > maxDepth {
		return nil, corrupt("boxes nested too deep")
	}
	parts := make([]string, len(h.Path))
	for i, t := range h.Path {
		parts[i] = string(t[:])
	}
	path := strings.Join(parts, "/")
	t := p.cur
	switch path {
	case "moov", "moov/trak/mdia/minf":
		return h.Expand()
	case "moov/mvex":
		return nil, ErrNotHandled // fragmented
	case "moov/mvhd":
		box, err := payload[*mp4.Mvhd](h)
		if err != nil {
			return nil, err
		}
		if d := box.GetDuration(); !unknownDuration(box.GetVersion(), d) {
			p.movieScale, p.movieDuration = box.Timescale, d
		}
		p.movieMatrix = box.Matrix
		return nil, nil
	case "moov/trak":
		p.cur = &track{display: identity}
		p.tracks = append(p.tracks, p.cur)
		return h.Expand()
	case "moov/trak/tkhd":
		if !t.hasTkhd {
			m, err := trackMatrix(p.box, bi)
			if err != nil {
				return nil, err
			}
			t.hasTkhd, t.display = true, m
		}
	case "moov/trak/mdia":
		if t.hasMedia {
			return nil, nil
		}
		t.hasMedia = true
		return h.Expand()
	case "moov/trak/mdia/hdlr":
		if t.handler == "" {
			box, err := payload[*mp4.Hdlr](h)
			if err != nil {
				return nil, err
			}
			t.handler = string(box.HandlerType[:])
		}
	case "moov/trak/mdia/mdhd":
		if !t.hasHeader {
			box, err := payload[*mp4.Mdhd](h)
			if err != nil {
				return nil, err
			}
			t.hasHeader, t.timescale = true, box.Timescale
			if d := box.GetDuration(); !unknownDuration(box.GetVersion(), d) {
				t.duration = d
			}
		}
	case "moov/trak/mdia/minf/stbl":
		if t.hasStbl {
			return nil, nil
		}
		t.hasStbl = true
		return h.Expand()
	case "moov/trak/mdia/minf/stbl/stsd":
		if t.stsd {
			return nil, nil
		}
		t.stsd = true
		return h.Expand()
	case "moov/trak/mdia/minf/stbl/stts":
		return first(h, &t.stts)
	case "moov/trak/mdia/minf/stbl/stsz":
		return first(h, &t.stsz)
	case "moov/trak/mdia/minf/stbl/stsc":
		return first(h, &t.stsc)
	case "moov/trak/mdia/minf/stbl/stco":
		return first(h, &t.stco)
	case "moov/trak/mdia/minf/stbl/co64":
		return first(h, &t.co64)
	case "moov/trak/mdia/minf/stbl/stz2":
		t.compactSzs = true
	default:
		if strings.HasPrefix(path, "moov/trak/mdia/minf/stbl/stsd/") && len(h.Path) == 7 && t.entry == nil {
			t.entry = &bi
		}
	}
	return nil, nil
}

// unknownDuration is the all-ones duration a header writes when it does
// not know it.
func unknownDuration(version uint8, d uint64) bool {
	return (version == 0 && d == math.MaxUint32) || (version == 1 && d == math.MaxUint64)
}

// payload reads the box of the handle as a B.
func payload[B mp4.IBox](h *mp4.ReadHandle) (B, error) {
	var zero B
	box, _, err := h.ReadPayload()
	if err != nil {
		return zero, damaged(h.BoxInfo.Type.String(), err)
	}
	b, ok := box.(B)
	if !ok {
		return zero, corrupt("box %s is not what its type says", h.BoxInfo.Type)
	}
	return b, nil
}

// first reads the box into *dst unless a box of its type came before.
func first[B mp4.IBox](h *mp4.ReadHandle, dst *B) (any, error) {
	var zero B
	if any(*dst) != any(zero) {
		return nil, nil
	}
	b, err := payload[B](h)
	if err != nil {
		return nil, err
	}
	*dst = b
	return nil, nil
}

// check fills the track's picture size and frame timing, and checks that
// its samples' bytes are inside the media data. r reads the movie box.
func (t *track) check(r io.ReadSeeker, ctx mp4.Context, mdats []extent) error {
	if !t.hasMedia {
		return nil
	}
	if !t.hasHeader {
		return corrupt("a track has no media header")
	}
	if !t.hasStbl {
		return nil
	}
	if t.compactSzs {
		return ErrNotHandled
	}
	if t.handler == "vide" {
		if err := t.sampleEntry(r, ctx); err != nil {
			return err
		}
	}
	if t.stts == nil {
		return corrupt("a track has no time-to-sample table")
	}
	for _, e := range t.stts.Entries {
		t.frames += uint64(e.SampleCount)
		t.ticks += uint64(e.SampleCount) * uint64(e.SampleDelta)
	}
	if t.stsz == nil {
		return corrupt("a track has no sample size table")
	}
	if t.frames != uint64(t.stsz.SampleCount) {
		return corrupt("the sample tables disagree: %d timed samples, %d sized", t.frames, t.stsz.SampleCount)
	}
	var offsets []uint64
	switch {
	case t.co64 != nil:
		offsets = t.co64.ChunkOffset
	case t.stco != nil:
		offsets = make([]uint64, len(t.stco.ChunkOffset))
		for i, o := range t.stco.ChunkOffset {
			offsets[i] = uint64(o)
		}
	default:
		return corrupt("a track has no chunk offset table")
	}
	if t.stsc == nil {
		return corrupt("a track has no sample-to-chunk table")
	}
	return checkChunks(t.stsc.Entries, offsets, t.stsz, mdats)
}

// sampleEntry reads the coded picture size from the first visual sample
// entry (what ffprobe reports as the stream's width and height). A
// codec go-mp4 has no name for is read with the visual sample entry's
// layout all the same.
func (t *track) sampleEntry(r io.ReadSeeker, ctx mp4.Context) error {
	if t.entry == nil {
		return corrupt("the video track has no sample description")
	}
	typ := t.entry.Type
	if !typ.IsSupported(ctx) {
		typ = mp4.BoxTypeAvc1()
	}
	vse := &mp4.VisualSampleEntry{SampleEntry: mp4.SampleEntry{AnyTypeBox: mp4.AnyTypeBox{Type: typ}}}
	if _, err := t.entry.SeekToPayload(r); err != nil {
		return damaged("stsd", err)
	}
	if _, err := mp4.Unmarshal(r, t.entry.Size-t.entry.HeaderSize, vse, ctx); err != nil {
		return corrupt("the video sample description is damaged: %v", err)
	}
	t.width, t.height = int(vse.Width), int(vse.Height)
	return nil
}

// checkChunks maps samples to chunks (stsc) and checks that every chunk's
// bytes lie inside one media data box and that every sample has a chunk:
// a truncated or patched file fails here even when its header survived.
func checkChunks(runs []mp4.StscEntry, offsets []uint64, sizes *mp4.Stsz, mdats []extent) error {
	count := uint64(sizes.SampleCount)
	if count > 0 && len(runs) == 0 {
		return corrupt("the samples are in no chunk")
	}
	sample := uint64(0)
	for r, run := range runs {
		first := uint64(run.FirstChunk)
		perChunk := uint64(run.SamplesPerChunk)
		last := uint64(len(offsets)) // chunks of this run: first..last (1-based)
		if r+1 < len(runs) {
			last = uint64(runs[r+1].FirstChunk) - 1
		}
		if first == 0 || first > last+1 || last > uint64(len(offsets)) || (r == 0 && first != 1) {
			return corrupt("the sample-to-chunk table is out of order")
		}
		for c := first; c <= last; c++ {
			if perChunk > count-sample {
				return corrupt("the chunks hold more samples than the file has")
			}
			var n uint64
			if sizes.SampleSize != 0 {
				n = perChunk * uint64(sizes.SampleSize)
			} else {
				for _, s := range sizes.EntrySize[sample : sample+perChunk] {
					n += uint64(s)
				}
			}
			sample += perChunk
			if !inside(offsets[c-1], n, mdats) {
				return corrupt("the file is truncated or damaged: a chunk of samples lies outside its media data")
			}
		}
	}
	if sample != count {
		return corrupt("%d of %d samples are in no chunk", count-sample, count)
	}
	return nil
}

// inside says whether n bytes at off lie within one of the extents.
func inside(off, n uint64, mdats []extent) bool {
	for _, m := range mdats {
		if off >= m.start && off <= m.end && n <= m.end-off {
			return true
		}
	}
	return false
}
