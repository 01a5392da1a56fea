package catalog

import (
	"encoding/binary"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ListedColumns are what a list or search page selects of each clip:
// VideoColumns and the version of its row (xmin, as video_cache.go
// explains), by which ScanListed takes the clip from this node's copies.
// A page row is ListedColumns, a nullable similarity, then the page's own
// columns (its sort key, a rank).
const ListedColumns = VideoColumns + `, v.xmin`

// videoColumns is how many columns VideoColumns names: the index of the
// version in a row of ListedColumns.
const videoColumns = 23

// ScanListed reads a page row of ListedColumns, a nullable similarity and
// the extra columns given. A clip this node has a copy of at the row's
// version is taken from the copy, and only the similarity and the extra
// columns are decoded; the copy is the row as that version holds it, on
// whichever server the page was read (a standby's row at a version is the
// primary's at that version). Otherwise the row is decoded whole and kept
// as a copy at its version, which an id lookup checks against the
// primary's version before it trusts it (the copy is made under no
// admission pass). The Video may be shared with other callers: it is
// read-only, but for its Similarity, which is the row's own.
func (s *Service) ScanListed(r pgx.CollectableRow, extra ...any) (Video, error) {
	now := time.Now()
	id, version, ok := listedVersion(r)
	if ok {
		if v, ok := s.videos.get(id, version, now); ok {
			dest := make([]any, videoColumns+2+len(extra))
			v.Similarity = nil
			dest[videoColumns+1] = &v.Similarity
			copy(dest[videoColumns+2:], extra)
			return v, r.Scan(dest...)
		}
	}
	var at uint32
	v, err := scanVideo(r, &at, extra)
	if err != nil {
		return v, err
	}
	if ok && at == version {
		copied := v
		copied.Similarity = nil
		s.videos.keep(id, cachedVideo{v: copied, version: version, live: v.RetiredAt == nil}, now)
	}
	return v, nil
}

// ReadListed is ScanListed for a reader without the node's copies: it
// decodes the row whole, its version included.
func ReadListed(r pgx.Row, extra ...any) (Video, error) {
	var version uint32
	return scanVideo(r, &version, extra)
}

// listedVersion reads a page row's clip id and row version from their raw
// binary values, without decoding the row; ok is false where they are not
// there in binary (a row without a clip, or a text-format result).
func listedVersion(r pgx.CollectableRow) (id uuid.UUID, version uint32, ok bool) {
	raw, fields := r.RawValues(), r.FieldDescriptions()
	if len(raw) <= videoColumns || len(fields) <= videoColumns ||
		fields[0].Format != pgx.BinaryFormatCode || fields[videoColumns].Format != pgx.BinaryFormatCode ||
		len(raw[0]) != len(id) || len(raw[videoColumns]) != 4 {
		return id, 0, false
	}
	copy(id[:], raw[0])
	return id, binary.BigEndian.Uint32(raw[videoColumns]), true
}
