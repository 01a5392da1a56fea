package catalog

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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

// ListedColumnCount is how many columns ListedColumns names, for a query
// that selects them in a subquery and names them to select them again.
const ListedColumnCount = videoColumns + 1

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

// ListedUnder returns the live clips ids, in that order, as the catalog's
// version v (an admission pass's, admission.Catalog) holds them: each from
// this node's copy made under v, the others in one read of the primary,
// which are then copied under v (the read comes after the pass that gave
// v, so v is a version read before it, as copies need). A clip that is not
// live any more is left out. It serves a list a node finds in its own
// order of the catalog under the same version (package search), whose
// page then costs no query once its clips are copied, and a keyword
// search's walk, which then reads the page's ids alone.
func (s *Service) ListedUnder(ctx context.Context, ids []uuid.UUID, v string) ([]Video, error) {
	now := time.Now()
	out := make([]Video, len(ids))
	found := make([]bool, len(ids))
	var missing []pgtype.UUID
	for i, id := range ids {
		if c, live, ok := s.videos.passed(id, v, now); ok && live {
			out[i], found[i] = c, true
			continue
		}
		missing = append(missing, pgtype.UUID{Bytes: id, Valid: true})
	}
	if len(missing) > 0 {
		rows, err := s.pool.Query(ctx, sqlListedByID, missing)
		if err != nil {
			return nil, fmt.Errorf("listed clips: %w", err)
		}
		read, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Video, error) {
			var version uint32
			return scanVideo(r, &version, nil)
		})
		if err != nil {
			return nil, fmt.Errorf("listed clips: %w", err)
		}
		at := make(map[uuid.UUID]Video, len(read))
		for _, c := range read {
			at[c.ID] = c
			s.videos.put(c.ID, cachedVideo{v: c, version: c.Version, live: true, pass: v}, now)
		}
		for i, id := range ids {
			if !found[i] {
				out[i], found[i] = at[id]
			}
		}
	}
	kept := out[:0]
	for i := range out {
		if found[i] {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}
