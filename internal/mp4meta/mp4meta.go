// Package mp4meta reads what a clip's probe needs (picture size, duration,
// frame rate) from an MP4 or QuickTime file in-process, without starting
// ffprobe, and checks that the file is whole: every box inside the file,
// the sample tables consistent, and every sample's bytes inside the media
// data. The boxes are parsed by github.com/abema/go-mp4; this package is
// the probe's policy over them. A file it does not understand (not ISO
// BMFF, fragmented, an image) is ErrNotHandled, for the caller to give to
// ffprobe.
package mp4meta

import (
	"errors"
	"fmt"
	"io"

	mp4 "github.com/abema/go-mp4"
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
	// Rotation is the clockwise turn, in degrees (0 to 359), that the
	// video track's display matrix gives the picture, and Mirrored that
	// the picture is flipped top to bottom before that turn (a matrix
	// with a negative determinant). Width and Height are after both.
	Rotation int
	Mirrored bool
	// TrailingBytes counts the bytes after the last complete top-level
	// box that form no box: players skip them, and so does the probe
	// once the movie box is whole and every sample lies inside the file.
	TrailingBytes int64
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

// known are the top-level box types whose header, past the first box,
// says a box was there: one that claims more than the file holds was cut
// short. Bytes with any other header are trailing bytes, not a box.
var known = map[string]bool{"ftyp": true, "moov": true, "mdat": true, "free": true,
	"skip": true, "wide": true, "pnot": true, "moof": true, "mfra": true, "sidx": true,
	"styp": true, "meta": true, "uuid": true, "udta": true, "pdin": true, "emsg": true}

// extent is a byte range [start, end) of the file.
type extent struct{ start, end uint64 }

// Read probes the file of size bytes read through r.
func Read(r io.ReaderAt, size int64) (Info, error) {
	top, err := walkTop(io.NewSectionReader(fullReads{r}, 0, size), uint64(size))
	if err != nil {
		return Info{}, err
	}
	info, err := parseMovie(top.moov, top.mdats)
	if err != nil {
		return Info{}, err
	}
	info.TrailingBytes = int64(top.trailing)
	return info, nil
}

// fullReads takes a read that filled its buffer as a full read, whatever
// error came with it: a reader may answer io.EOF along with the file's last
// bytes, as the ReaderAt contract allows and minio's objects do.
type fullReads struct{ r io.ReaderAt }

func (f fullReads) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.r.ReadAt(p, off)
	switch {
	case n == len(p):
		err = nil
	case err != nil && !errors.Is(err, io.EOF):
		err = &readFailure{err}
	}
	return n, err
}

// readFailure is a read of the file that failed for the store's reasons,
// not the file's: it tells an unreadable store from a damaged file.
type readFailure struct{ err error }

func (e *readFailure) Error() string { return e.err.Error() }
func (e *readFailure) Unwrap() error { return e.err }

// movie is the movie box read into memory, with what its parsing needs
// from the file type box.
type movie struct {
	box []byte
	ctx mp4.Context
}

// top is what the walk of the top level found: the movie box, the media
// data boxes' extents, and the count of bytes after the last box that
// form none.
type top struct {
	moov     movie
	mdats    []extent
	trailing uint64
}

// walkTop walks the top-level boxes from the start of the file to its end
// or to bytes that form no box (trailing bytes: a header of no known type
// that does not fit the file, or too short to be one), and returns the
// movie box and the media data boxes' extents. A known box that claims
// more than the file holds was cut short. Trailing bytes are tolerated
// here because parseMovie then requires the whole movie box and every
// sample inside a complete media data box: a cut file still fails there.
func walkTop(r *io.SectionReader, size uint64) (top, error) {
	var t top
	moov := &t.moov
	hasMeta := false
	off := uint64(0)
	for n := 0; off < size; n++ {
		if n == maxTopLevelBoxes {
			return t, ErrNotHandled
		}
		if _, err := r.Seek(int64(off), io.SeekStart); err != nil {
			return t, err
		}
		bi, err := mp4.ReadBoxInfo(r)
		if err != nil {
			if n > 0 && !isReadFailure(err) {
				t.trailing = size - off
				break
			}
			return t, headerError(err)
		}
		typ := bi.Type.String()
		if n == 0 && !topLevel[string(bi.Type[:])] {
			return t, ErrNotHandled
		}
		if bi.Size < bi.HeaderSize || bi.Size > size-off {
			if n > 0 && !known[string(bi.Type[:])] {
				t.trailing = size - off
				break
			}
			if bi.Size < bi.HeaderSize {
				return t, corrupt("box %s has an impossible size", typ)
			}
			return t, corrupt("the file is truncated: its %s box needs %d bytes, %d are left",
				typ, bi.Size, size-off)
		}
		switch bi.Type {
		case mp4.BoxTypeFtyp():
			var ftyp mp4.Ftyp
			if _, err := bi.SeekToPayload(r); err != nil {
				return t, err
			}
			if _, err := mp4.Unmarshal(r, bi.Size-bi.HeaderSize, &ftyp, bi.Context); err != nil {
				return t, damaged("ftyp", err)
			}
			moov.ctx.IsQuickTimeCompatible = ftyp.MajorBrand == mp4.BrandQT() || ftyp.HasCompatibleBrand(mp4.BrandQT())
		case mp4.BoxTypeMoov():
			if moov.box != nil {
				return t, corrupt("the file has two movie boxes")
			}
			if bi.Size > maxMoovBytes {
				return t, ErrNotHandled
			}
			moov.box = make([]byte, bi.Size)
			if _, err := r.ReadAt(moov.box, int64(bi.Offset)); err != nil {
				return t, readError(err)
			}
		case mp4.BoxTypeMdat():
			t.mdats = append(t.mdats, extent{bi.Offset + bi.HeaderSize, bi.Offset + bi.Size})
		case mp4.BoxTypeMoof(), mp4.BoxTypeMfra(), mp4.BoxTypeSidx(), mp4.BoxTypeStyp():
			return t, ErrNotHandled // fragmented: ffprobe reads it
		case mp4.BoxTypeMeta():
			hasMeta = true
		}
		off += bi.Size
	}
	if moov.box == nil {
		if hasMeta {
			return t, ErrNotHandled // an image (HEIF, AVIF)
		}
		return t, corrupt("the file has no movie box (moov): it is incomplete")
	}
	return t, nil
}

// readError is a failed read of the file (the store's, not the file's
// fault).
func readError(err error) error {
	return fmt.Errorf("mp4meta: read: %w", err)
}

// isReadFailure says whether err is the store's failure to read.
func isReadFailure(err error) bool {
	var rf *readFailure
	return errors.As(err, &rf)
}

// headerError is a top-level box header that could not be read: the
// store's failure, or the file's end or damage.
func headerError(err error) error {
	var rf *readFailure
	switch {
	case errors.As(err, &rf):
		return readError(err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return corrupt("the file ends inside a box header")
	}
	return corrupt("a box header is damaged: %v", err)
}

// damaged is a box the parser refused (or a failed read of it).
func damaged(typ string, err error) error {
	if rf := (*readFailure)(nil); errors.As(err, &rf) {
		return readError(err)
	}
	return corrupt("the %s box is damaged: %v", typ, err)
}
