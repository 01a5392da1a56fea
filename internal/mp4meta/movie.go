package mp4meta

import (
	"encoding/binary"
	"math"
)

// track is what one trak box says about its samples.
type track struct {
	handler   string
	timescale uint32
	duration  uint64 // in timescale units (mdhd)
	width     int
	height    int
	frames    uint64 // samples by the time-to-sample table
	ticks     uint64 // their total duration, in timescale units
}

// parseMovie reads the movie box's payload: its header, the first video
// track's picture and timing, and every track's sample tables, whose bytes
// must lie inside the file's media data.
func parseMovie(moov []byte, mdats []extent) (Info, error) {
	kids, err := children(moov)
	if err != nil {
		return Info{}, err
	}
	var info Info
	var video *track
	movieSeconds := 0.0
	for _, k := range kids {
		switch k.typ {
		case "mvex":
			return Info{}, ErrNotHandled // fragmented
		case "mvhd":
			if movieSeconds, err = movieHeader(k.payload); err != nil {
				return Info{}, err
			}
		case "trak":
			t, err := parseTrack(k.payload, mdats)
			if err != nil {
				return Info{}, err
			}
			if t.timescale > 0 {
				info.Duration = math.Max(info.Duration, float64(t.duration)/float64(t.timescale))
			}
			if t.handler == "vide" && video == nil {
				video = &t
			}
		}
	}
	// The movie header's duration is the presentation's, edits applied (a
	// sound track's encoder priming is cut); the tracks' own lengths stand
	// in only when it has none.
	if movieSeconds > 0 {
		info.Duration = movieSeconds
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
	info.Width, info.Height, info.Frames = video.width, video.height, int(min(video.frames, math.MaxInt32))
	info.FPS = math.Round(float64(video.frames)*float64(video.timescale)/float64(video.ticks)*1000) / 1000
	return info, nil
}

// movieHeader returns the movie's duration in seconds from mvhd.
func movieHeader(p []byte) (float64, error) {
	scale, dur, err := timing(p, "mvhd")
	if err != nil || scale == 0 {
		return 0, err
	}
	return float64(dur) / float64(scale), nil
}

// timing reads the timescale and duration of a movie or media header
// (mvhd, mdhd): version 0 has 32-bit times, version 1 64-bit ones.
func timing(p []byte, name string) (uint32, uint64, error) {
	if len(p) < 4 {
		return 0, 0, corrupt("%s is cut short", name)
	}
	switch p[0] {
	case 0:
		if len(p) < 20 {
			return 0, 0, corrupt("%s is cut short", name)
		}
		dur := uint64(binary.BigEndian.Uint32(p[16:20]))
		if dur == math.MaxUint32 { // "unknown"
			dur = 0
		}
		return binary.BigEndian.Uint32(p[12:16]), dur, nil
	case 1:
		if len(p) < 32 {
			return 0, 0, corrupt("%s is cut short", name)
		}
		dur := binary.BigEndian.Uint64(p[24:32])
		if dur == math.MaxUint64 {
			dur = 0
		}
		return binary.BigEndian.Uint32(p[20:24]), dur, nil
	}
	return 0, 0, corrupt("%s has an unknown version %d", name, p[0])
}

// parseTrack reads one trak box.
func parseTrack(p []byte, mdats []extent) (track, error) {
	var t track
	mdia, err := find(p, "mdia")
	if err != nil || mdia == nil {
		return t, err
	}
	if hdlr, err := find(mdia, "hdlr"); err != nil {
		return t, err
	} else if len(hdlr) >= 12 {
		t.handler = string(hdlr[8:12])
	}
	mdhd, err := find(mdia, "mdhd")
	if err != nil {
		return t, err
	}
	if mdhd == nil {
		return t, corrupt("a track has no media header")
	}
	if t.timescale, t.duration, err = timing(mdhd, "mdhd"); err != nil {
		return t, err
	}
	stbl, err := find(mdia, "minf", "stbl")
	if err != nil || stbl == nil {
		return t, err
	}
	err = readSampleTables(&t, stbl, mdats)
	return t, err
}

// readSampleTables fills the track's picture size and frame timing, and
// checks that its samples' bytes are inside the media data.
func readSampleTables(t *track, stbl []byte, mdats []extent) error {
	tables := map[string][]byte{}
	kids, err := children(stbl)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if _, seen := tables[k.typ]; !seen {
			tables[k.typ] = k.payload
		}
	}
	if _, ok := tables["stz2"]; ok {
		return ErrNotHandled
	}
	if t.handler == "vide" {
		if err := sampleEntry(t, tables["stsd"]); err != nil {
			return err
		}
	}
	if err := timeToSample(t, tables["stts"]); err != nil {
		return err
	}
	sizes, err := newSampleSizes(tables["stsz"])
	if err != nil {
		return err
	}
	if t.frames != sizes.count {
		return corrupt("the sample tables disagree: %d timed samples, %d sized", t.frames, sizes.count)
	}
	offsets, err := chunkOffsets(tables["stco"], tables["co64"])
	if err != nil {
		return err
	}
	return checkChunks(tables["stsc"], offsets, sizes, mdats)
}

// sampleEntry reads the coded picture size from the first visual sample
// entry (what ffprobe reports as the stream's width and height).
func sampleEntry(t *track, stsd []byte) error {
	if len(stsd) < 8 {
		return corrupt("the video track has no sample description")
	}
	if binary.BigEndian.Uint32(stsd[4:8]) == 0 {
		return corrupt("the video track has no sample description")
	}
	e := stsd[8:]
	if len(e) < 36 {
		return corrupt("the video sample description is cut short")
	}
	if n := binary.BigEndian.Uint32(e[:4]); n < 36 || uint64(n) > uint64(len(e)) {
		return corrupt("the video sample description does not fit")
	}
	t.width, t.height = int(binary.BigEndian.Uint16(e[32:34])), int(binary.BigEndian.Uint16(e[34:36]))
	return nil
}

// timeToSample sums the stts table: frames and their total duration.
func timeToSample(t *track, stts []byte) error {
	entries, err := table(stts, 8, "time-to-sample")
	if err != nil {
		return err
	}
	for i := 0; i < len(entries); i += 8 {
		n := uint64(binary.BigEndian.Uint32(entries[i:]))
		d := uint64(binary.BigEndian.Uint32(entries[i+4:]))
		t.frames += n
		t.ticks += n * d
	}
	return nil
}

// table returns a full box's entries (after version, flags and the entry
// count), checking that the count fits the box.
func table(p []byte, entrySize int, name string) ([]byte, error) {
	if p == nil {
		return nil, corrupt("a track has no %s table", name)
	}
	if len(p) < 8 {
		return nil, corrupt("the %s table is cut short", name)
	}
	n := uint64(binary.BigEndian.Uint32(p[4:8]))
	if n*uint64(entrySize) > uint64(len(p)-8) {
		return nil, corrupt("the %s table claims more entries than it holds", name)
	}
	return p[8 : 8+n*uint64(entrySize)], nil
}

// sampleSizes is the stsz table: one size for all samples, or one each.
type sampleSizes struct {
	fixed uint64
	count uint64
	each  []byte
}

func newSampleSizes(stsz []byte) (sampleSizes, error) {
	if stsz == nil {
		return sampleSizes{}, corrupt("a track has no sample size table")
	}
	if len(stsz) < 12 {
		return sampleSizes{}, corrupt("the sample size table is cut short")
	}
	s := sampleSizes{fixed: uint64(binary.BigEndian.Uint32(stsz[4:8])), count: uint64(binary.BigEndian.Uint32(stsz[8:12]))}
	if s.fixed == 0 {
		if s.count*4 > uint64(len(stsz)-12) {
			return s, corrupt("the sample size table claims more entries than it holds")
		}
		s.each = stsz[12 : 12+s.count*4]
	}
	return s, nil
}

func (s sampleSizes) size(i uint64) uint64 {
	if s.each == nil {
		return s.fixed
	}
	return uint64(binary.BigEndian.Uint32(s.each[i*4:]))
}

// chunkOffsets reads stco (32-bit) or co64 (64-bit) chunk offsets.
func chunkOffsets(stco, co64 []byte) ([]uint64, error) {
	if co64 != nil {
		e, err := table(co64, 8, "chunk offset")
		if err != nil {
			return nil, err
		}
		out := make([]uint64, len(e)/8)
		for i := range out {
			out[i] = binary.BigEndian.Uint64(e[i*8:])
		}
		return out, nil
	}
	e, err := table(stco, 4, "chunk offset")
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(e)/4)
	for i := range out {
		out[i] = uint64(binary.BigEndian.Uint32(e[i*4:]))
	}
	return out, nil
}

// checkChunks maps samples to chunks (stsc) and checks that every chunk's
// bytes lie inside one media data box and that every sample has a chunk:
// a truncated or patched file fails here even when its header survived.
func checkChunks(stsc []byte, offsets []uint64, sizes sampleSizes, mdats []extent) error {
	runs, err := table(stsc, 12, "sample-to-chunk")
	if err != nil {
		return err
	}
	if sizes.count > 0 && len(runs) == 0 {
		return corrupt("the samples are in no chunk")
	}
	sample := uint64(0)
	for r := 0; r < len(runs); r += 12 {
		first := uint64(binary.BigEndian.Uint32(runs[r:]))
		perChunk := uint64(binary.BigEndian.Uint32(runs[r+4:]))
		last := uint64(len(offsets)) // chunks of this run: first..last (1-based)
		if r+12 < len(runs) {
			last = uint64(binary.BigEndian.Uint32(runs[r+12:])) - 1
		}
		if first == 0 || first > last+1 || last > uint64(len(offsets)) || (r == 0 && first != 1) {
			return corrupt("the sample-to-chunk table is out of order")
		}
		for c := first; c <= last; c++ {
			if perChunk > sizes.count-sample {
				return corrupt("the chunks hold more samples than the file has")
			}
			var bytes uint64
			if sizes.each == nil {
				bytes = perChunk * sizes.fixed
			} else {
				for i := sample; i < sample+perChunk; i++ {
					bytes += sizes.size(i)
				}
			}
			sample += perChunk
			if !inside(offsets[c-1], bytes, mdats) {
				return corrupt("the file is truncated or damaged: a chunk of samples lies outside its media data")
			}
		}
	}
	if sample != sizes.count {
		return corrupt("%d of %d samples are in no chunk", sizes.count-sample, sizes.count)
	}
	return nil
}

// inside says whether n bytes at off lie within one of the extents.
func inside(off, n uint64, mdats []extent) bool {
	for _, m := range mdats {
		if off >= uint64(m.start) && n <= uint64(m.end)-off && off <= uint64(m.end) {
			return true
		}
	}
	return false
}
