// Package mp4meta reads what a clip's probe needs (picture size, duration,
// frame rate) from an MP4 or QuickTime file in-process, without starting
// ffprobe, and checks that the file is whole: every box inside the file,
// the sample tables consistent, and every sample's bytes inside the media
// data. A file it does not understand (not ISO BMFF, fragmented, an
// image) is ErrNotHandled, for the caller to give to ffprobe.
package mp4meta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Info is what Read finds in the file's first video track.
type Info struct {
	Width, Height int
	// Duration is the presentation's length in seconds: the movie
	// header's (edits applied), as ffprobe reports it.
	Duration float64
	// FPS is the video track's average frame rate: its frames over its
	// samples' total duration.
	FPS    float64
	Frames int
}

// ErrNotHandled is a file this package leaves to ffprobe: not an ISO base
// media file, or one of the kinds it does not read (fragmented MP4,
// compact sample sizes, HEIF images). It says nothing about soundness.
var ErrNotHandled = errors.New("mp4meta: not a file this reader handles")

// CorruptError is a file that claims to be MP4/QuickTime but is not whole
// or not consistent: no customer should be sold it.
type CorruptError struct{ Reason string }

func (e *CorruptError) Error() string { return e.Reason }

func corrupt(format string, args ...any) error {
	return &CorruptError{Reason: fmt.Sprintf(format, args...)}
}

// Limits against hostile files: the movie box is read into memory, and
// the top level is walked box by box.
const (
	maxMoovBytes     = 64 << 20
	maxTopLevelBoxes = 4096
	maxDepth         = 16
)

// topLevel are the box types an MP4 or QuickTime file starts with; any
// other first box means the file is something else (for ffprobe).
var topLevel = map[string]bool{"ftyp": true, "moov": true, "mdat": true, "free": true,
	"skip": true, "wide": true, "pnot": true}

// extent is a byte range [start, end) of the file.
type extent struct{ start, end int64 }

// Read probes the file of size bytes read through r.
func Read(r io.ReaderAt, size int64) (Info, error) {
	moov, mdats, err := walkTop(r, size)
	if err != nil {
		return Info{}, err
	}
	return parseMovie(moov, mdats)
}

// walkTop checks that the top-level boxes tile the file exactly, and
// returns the movie box's payload and the media data boxes' extents.
func walkTop(r io.ReaderAt, size int64) ([]byte, []extent, error) {
	var moov []byte
	var mdats []extent
	var hdr [16]byte
	hasMeta := false
	off := int64(0)
	for n := 0; off < size; n++ {
		if n == maxTopLevelBoxes {
			return nil, nil, ErrNotHandled
		}
		if size-off < 8 {
			return nil, nil, corrupt("the file ends inside a box header")
		}
		if err := readAt(r, hdr[:8], off); err != nil {
			return nil, nil, err
		}
		boxSize, typ, headerLen := int64(binary.BigEndian.Uint32(hdr[:4])), string(hdr[4:8]), int64(8)
		if n == 0 && !topLevel[typ] {
			return nil, nil, ErrNotHandled
		}
		switch boxSize {
		case 0: // to the end of the file
			boxSize = size - off
		case 1:
			if size-off < 16 {
				return nil, nil, corrupt("the file ends inside a box header")
			}
			if err := readAt(r, hdr[8:16], off+8); err != nil {
				return nil, nil, err
			}
			u := binary.BigEndian.Uint64(hdr[8:16])
			if u > math.MaxInt64 {
				return nil, nil, corrupt("box %q has an impossible size", printable(typ))
			}
			boxSize, headerLen = int64(u), 16
		}
		if boxSize < headerLen {
			return nil, nil, corrupt("box %q has an impossible size", printable(typ))
		}
		if boxSize > size-off {
			return nil, nil, corrupt("the file is truncated: its %q box needs %d bytes, %d are left",
				printable(typ), boxSize, size-off)
		}
		payload := extent{off + headerLen, off + boxSize}
		switch typ {
		case "moov":
			if moov != nil {
				return nil, nil, corrupt("the file has two movie boxes")
			}
			if boxSize > maxMoovBytes {
				return nil, nil, ErrNotHandled
			}
			moov = make([]byte, payload.end-payload.start)
			if err := readAt(r, moov, payload.start); err != nil {
				return nil, nil, err
			}
		case "mdat":
			mdats = append(mdats, payload)
		case "moof", "mfra", "sidx", "styp":
			return nil, nil, ErrNotHandled // fragmented: ffprobe reads it
		case "meta":
			hasMeta = true
		}
		off += boxSize
	}
	if moov == nil {
		if hasMeta {
			return nil, nil, ErrNotHandled // an image (HEIF, AVIF)
		}
		return nil, nil, corrupt("the file has no movie box (moov): it is incomplete")
	}
	return moov, mdats, nil
}

// readAt fills p from off. A reader may answer io.EOF with every byte when
// p ends at the end of the file (minio's objects do): that is a full read.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("mp4meta: read: %w", err)
}

// printable keeps a box type readable in a message.
func printable(typ string) string {
	b := []byte(typ)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// box is one child box in a parent's payload.
type box struct {
	typ     string
	payload []byte
}

// children splits a payload into its boxes; they must fill it exactly
// (a trailing 32-bit zero terminator, as QuickTime writes, is allowed).
func children(b []byte) ([]box, error) {
	var out []box
	for len(b) > 0 {
		if len(b) == 4 && binary.BigEndian.Uint32(b) == 0 {
			break
		}
		if len(b) < 8 {
			return nil, corrupt("a box header is cut short")
		}
		size, typ, hl := uint64(binary.BigEndian.Uint32(b)), string(b[4:8]), uint64(8)
		switch size {
		case 0:
			size = uint64(len(b))
		case 1:
			if len(b) < 16 {
				return nil, corrupt("a box header is cut short")
			}
			size, hl = binary.BigEndian.Uint64(b[8:16]), 16
		}
		if size < hl || size > uint64(len(b)) {
			return nil, corrupt("box %q does not fit in its parent", printable(typ))
		}
		out = append(out, box{typ: typ, payload: b[hl:size]})
		b = b[size:]
	}
	return out, nil
}

// find returns the first child of type typ along path (nil when absent).
func find(b []byte, path ...string) ([]byte, error) {
	if len(path) > maxDepth {
		return nil, corrupt("boxes nested too deep")
	}
	for _, typ := range path {
		kids, err := children(b)
		if err != nil {
			return nil, err
		}
		b = nil
		for _, k := range kids {
			if k.typ == typ {
				b = k.payload
				break
			}
		}
		if b == nil {
			return nil, nil
		}
	}
	return b, nil
}
