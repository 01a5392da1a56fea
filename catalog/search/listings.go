package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/admission"
)

// A list (filters and a sort, no words, vector or ownership filter, paged
// by offset or cursor) is answered, where it can be, from this node's own order of
// the live catalog (listings) instead of a page statement: Postgres walks
// an index past every skipped entry of a deep page, which costs more than
// the rest of the request, where the node skips them in memory.
//
// The listings are made under the catalog's version an admission pass
// gives (admission.Catalog): every write of a clip's row holds it across
// the commit and renews it after, so while a request's pass gives the
// version the listings were made under, no clip was added, retired or
// changed since, and they are the catalog as Postgres holds it. A request
// whose pass gives another version (or none) is answered by the page
// statement, and the node makes its listings again once the catalog has
// stayed at one version for listingsQuiet: a catalog being imported, which
// changes many times a second, is never read whole over and over. They are
// read from the primary (a standby may not have replayed a change its
// version already counts), and live videoCacheTTL at most, as the clip
// copies do, so a row written past the catalog package (a hand-made
// UPDATE) is seen by lists no later than by id lookups.
//
// A page's clips come from catalog.ListedUnder: the node's copies made
// under the same version, or one read of the primary for those it lacks.

// listingsQuiet is how long the catalog must keep one version before a node
// reads it whole for its listings.
const listingsQuiet = time.Second

// listingsTTL bounds the life of listings (videoCacheTTL's, for the same
// reasons).
const listingsTTL = 10 * time.Minute

// maxListed is the largest catalog a node keeps listings of (about 100
// bytes a clip); a larger one is listed by page statements.
const maxListed = 2_000_000

// maxListingScan bounds the entries one page looks at (a few hundred
// microseconds); a filter that selects too few of them for its page in that
// many goes to the page statement, whose indexes find rare values at once.
const maxListingScan = 1 << 18

// errUnlisted ends the read of a catalog that listings cannot order as
// Postgres does.
var errUnlisted = errors.New("catalog not listable")

// listings is the live catalog in each sort's order, as one catalog
// version holds it.
type listings struct {
	version string
	expires time.Time
	clips   []listedClip
	// dicts are the values of each equality filter, by code (0: no value),
	// and fields where each filter's code sits in listedClip.attrs.
	dicts  [facets]map[string]uint64
	fields [facets]field
	// orders are the clips by each sort key (sortOrders), ascending by the
	// key, then by id; the clips without the key (nulls) come after the
	// others, by id.
	orders [len(sortOrders)]order
}

// The equality filters, in attrs order.
const (
	facetEmotion = iota
	facetGender
	facetAgeRange
	facetLocation
	facetMediaType
	facetOrientation
	facetDifficulty
	facetModel
	facets
)

type field struct{ shift, width uint }

// listedClip is what a list's filters and sorts read of a clip.
type listedClip struct {
	id        uuid.UUID
	created   int64 // microseconds since 1970
	price     int64
	duration  float64 // NaN: none
	virality  int32   // -1: none
	attrs     uint64  // the codes of its equality filters' values
	hasLength bool
}

// order is one sort's sequence of clips, with each one's attrs beside it
// so that a filter reads them in sequence.
type order struct {
	pos   []int32
	attrs []uint64
	// keyed is how many clips have the key; the rest are after them.
	keyed int
}

// sortOrders are the sort keys listings keep, in orders' order.
var sortOrders = [...]string{SortCreatedAt, SortPrice, SortDuration, SortVirality}

// listingsHolder is a node's listings and what it knows of the versions
// it has seen.
type listingsHolder struct {
	mu       sync.Mutex
	current  *listings
	seen     string
	seenAt   time.Time
	building bool
	// tried is the version of the last build, which is not made again
	// before retryAt (a catalog listings cannot hold, a failed read).
	tried   string
	retryAt time.Time
	quiet   time.Duration
}

func newListingsHolder(quiet time.Duration) *listingsHolder { return &listingsHolder{quiet: quiet} }

// listingsRetry is how soon a build that failed is tried again under the
// same version.
const listingsRetry = 10 * time.Second

// at returns the listings made under version v, if the node has them; when
// it has none and v has held for the quiet time (or the node never made
// any), it starts making them, once per version.
func (h *listingsHolder) at(v string, now time.Time, build func(v string)) *listings {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.current; l != nil && l.version == v && now.Before(l.expires) {
		return l
	}
	if v != h.seen {
		h.seen, h.seenAt = v, now
	}
	if h.building || (v == h.tried && now.Before(h.retryAt)) {
		return nil
	}
	// A node that never made listings makes them at once: a catalog
	// being changed still waits, as its version moves before they are
	// made, and the node's next ones wait for quiet.
	if h.tried == "" || now.Sub(h.seenAt) >= h.quiet {
		h.building, h.tried, h.retryAt = true, v, now.Add(listingsTTL)
		go build(v)
	}
	return nil
}

// done ends a build: l becomes the node's listings. A build that failed
// (err) is tried again after listingsRetry; one that found a catalog
// listings cannot hold (nil, no error) waits for another version.
func (h *listingsHolder) done(l *listings, err error) {
	h.mu.Lock()
	h.building = false
	if l != nil {
		h.current = l
	}
	if err != nil {
		h.retryAt = time.Now().Add(listingsRetry)
	}
	h.mu.Unlock()
}

// listingsFor returns the listings q may be answered from: q is a list
// they serve, its pass gives a catalog version, and the node has listings
// made under it.
func (s *Service) listingsFor(ctx context.Context, q Query) *listings {
	if s.listed == nil || q.Search != "" || q.byVector() || q.Owned != nil {
		return nil
	}
	return s.listingsUnder(ctx, q)
}

// listingsUnder returns the node's listings made under the catalog version
// q's pass gives, if it has them, and starts making them if not (at).
func (s *Service) listingsUnder(ctx context.Context, q Query) *listings {
	v, ok := q.Pass.Version(admission.Catalog)
	if !ok {
		return nil
	}
	return s.listed.at(v, time.Now(), func(v string) {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		l, err := s.buildListings(bctx, v)
		s.listed.done(l, err)
	})
}

// quietVersion is the catalog version q's pass gives when this node has
// listings made under it: the catalog has not changed since (listings
// wait for a quiet catalog), so the node's copies of its clips under that
// version are there to be taken (walkUnder) instead of read again. A
// catalog being changed has none, and its pages read the clips' rows.
func (s *Service) quietVersion(ctx context.Context, q Query) (string, bool) {
	if s.listed == nil {
		return "", false
	}
	if l := s.listingsUnder(ctx, q); l != nil {
		return l.version, true
	}
	return "", false
}

// buildListings reads the live catalog from the primary into listings
// made under version v (read before this read, by a request's pass).
func (s *Service) buildListings(ctx context.Context, v string) (*listings, error) {
	l := &listings{version: v, expires: time.Now().Add(listingsTTL)}
	for f := range l.dicts {
		l.dicts[f] = map[string]uint64{}
	}
	var codes [facets][]uint64
	err := s.catalog.Read(ctx, true, func(db *pgxpool.Pool) error {
		l.clips, codes = l.clips[:0], [facets][]uint64{}
		// In a transaction that gives up a lock it would wait for (a
		// migration's, say): nobody waits for this read, which is made
		// again later.
		tx, err := db.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, sqlListingsLockTimeout); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sqlListings, maxListed+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := l.decode(rows, &codes)
			if err != nil {
				return err
			}
			l.clips = append(l.clips, c)
		}
		return rows.Err()
	})
	if errors.Is(err, errUnlisted) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(l.clips) > maxListed || !l.pack(codes) {
		return nil, nil
	}
	byID := l.byID()
	for i, by := range sortOrders {
		l.orders[i] = l.sorted(by, byID)
	}
	return l, nil
}

// decode reads a row of sqlListings from its binary values (a million rows
// decoded through Scan cost seconds of allocations), adding its filter
// values' codes to codes. A row in another format, or one Postgres would
// order apart from what listings model (no price, an infinite time, a
// duration that is not finite), is errUnlisted.
func (l *listings) decode(rows pgx.Rows, codes *[facets][]uint64) (listedClip, error) {
	var c listedClip
	raw, fields := rows.RawValues(), rows.FieldDescriptions()
	if len(raw) != 5+facets {
		return c, errUnlisted
	}
	// The filter values are text, the same bytes in either format.
	for _, f := range fields[:5] {
		if f.Format != pgx.BinaryFormatCode {
			return c, errUnlisted
		}
	}
	if len(raw[0]) != 16 || len(raw[1]) != 8 || len(raw[2]) != 8 {
		return c, errUnlisted
	}
	copy(c.id[:], raw[0])
	// timestamptz: microseconds since 2000-01-01 UTC; the extremes are
	// -infinity and infinity.
	at := int64(binary.BigEndian.Uint64(raw[1]))
	if at == math.MaxInt64 || at == math.MinInt64 {
		return c, errUnlisted
	}
	c.created = at + postgresEpochMicros
	c.price = int64(binary.BigEndian.Uint64(raw[2]))
	c.duration, c.hasLength = math.NaN(), raw[3] != nil
	if c.hasLength {
		if len(raw[3]) != 8 {
			return c, errUnlisted
		}
		c.duration = math.Float64frombits(binary.BigEndian.Uint64(raw[3]))
		if math.IsNaN(c.duration) || math.IsInf(c.duration, 0) || c.duration < 0 {
			return c, errUnlisted
		}
		if c.duration == 0 {
			c.duration = 0 // -0 orders as 0 in Postgres
		}
	}
	c.virality = -1
	if raw[4] != nil {
		if len(raw[4]) != 4 {
			return c, errUnlisted
		}
		c.virality = int32(binary.BigEndian.Uint32(raw[4]))
	}
	for f := range facets {
		val, code := raw[5+f], uint64(0)
		if val != nil {
			var ok bool
			if code, ok = l.dicts[f][string(val)]; !ok {
				code = uint64(len(l.dicts[f]) + 1)
				l.dicts[f][string(val)] = code
			}
		}
		codes[f] = append(codes[f], code)
	}
	return c, nil
}

// postgresEpochMicros is 2000-01-01 UTC in microseconds since 1970.
const postgresEpochMicros = 946_684_800_000_000

// pack gives each filter its bits of attrs and writes each clip's codes;
// false when they need more than 64 bits.
func (l *listings) pack(codes [facets][]uint64) bool {
	var shift uint
	for f := range l.fields {
		w := uint(bits.Len(uint(len(l.dicts[f]))))
		l.fields[f] = field{shift: shift, width: w}
		shift += w
	}
	if shift > 64 {
		return false
	}
	for i := range l.clips {
		var a uint64
		for f, fd := range l.fields {
			a |= codes[f][i] << fd.shift
		}
		l.clips[i].attrs = a
	}
	return true
}

// sorted is the order of the clips by key by, ascending, ties by id, the
// clips without the key after the others, by id: a stable radix sort by
// the key of byID, the clips in id order.
func (l *listings) sorted(by string, byID []int32) order {
	keys := make([]uint64, len(byID))
	keyed := 0
	for i, p := range byID {
		c := &l.clips[p]
		var k uint64
		switch by {
		case SortCreatedAt:
			k = uint64(c.created) ^ 1<<63 // signed order as unsigned
		case SortPrice:
			k = uint64(c.price) ^ 1<<63
		case SortDuration:
			// A finite duration of at least 0 (decode): its bits
			// order as the numbers do, and below NaN's, which
			// stands for none.
			k = math.Float64bits(c.duration)
		case SortVirality:
			k = uint64(uint32(c.virality)) // none (-1) after 0-100
		}
		keys[i] = k
		if l.hasKey(c, by) {
			keyed++
		}
	}
	pos := slices.Clone(byID)
	radixSort(keys, pos)
	o := order{pos: pos, attrs: make([]uint64, len(pos)), keyed: keyed}
	for i, p := range pos {
		o.attrs[i] = l.clips[p].attrs
	}
	return o
}

// hasKey says whether c has the sort key by.
func (l *listings) hasKey(c *listedClip, by string) bool {
	switch by {
	case SortDuration:
		return c.hasLength
	case SortVirality:
		return c.virality >= 0
	}
	return true
}

// byID is the clips' positions in the order of their ids (as Postgres
// compares uuids: bytewise).
func (l *listings) byID() []int32 {
	pos := make([]int32, len(l.clips))
	for i := range pos {
		pos[i] = int32(i)
	}
	lo, hi := make([]uint64, len(pos)), make([]uint64, len(pos))
	for i := range l.clips {
		id := l.clips[i].id
		lo[i], hi[i] = binary.BigEndian.Uint64(id[8:]), binary.BigEndian.Uint64(id[:8])
	}
	radixSort(lo, pos)
	for i, p := range pos {
		lo[i] = hi[p]
	}
	radixSort(lo, pos)
	return pos
}

// radixSort sorts pos by keys (keys[i] is pos[i]'s), stably, in place: a
// least significant digit radix sort, a byte a pass, each pass that would
// not move anything skipped.
func radixSort(keys []uint64, pos []int32) {
	n := len(keys)
	outK, outP := keys, pos
	k2, p2 := make([]uint64, n), make([]int32, n)
	for shift := uint(0); shift < 64; shift += 8 {
		var count [257]int
		for _, k := range keys {
			count[(k>>shift&0xff)+1]++
		}
		if slices.Contains(count[1:], n) {
			continue
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for i, k := range keys {
			b := k >> shift & 0xff
			k2[count[b]], p2[count[b]] = k, pos[i]
			count[b]++
		}
		keys, k2 = k2, keys
		pos, p2 = p2, pos
	}
	if n > 0 && &pos[0] != &outP[0] {
		copy(outK, keys)
		copy(outP, pos)
	}
}

// filter is a query's filters over listings: attrs&mask == want, then the
// bounds.
type filter struct {
	mask, want  uint64
	none        bool // a value no live clip has
	minDur      *float64
	maxDur      *float64
	minVirality *int
	needsClip   bool
}

func (l *listings) filter(q Query) filter {
	var f filter
	for fc, val := range [facets]string{q.Emotion, q.Gender, q.AgeRange, q.Location, q.MediaType,
		q.Orientation, q.Difficulty, q.ModelID} {
		if val == "" {
			continue
		}
		code, ok := l.dicts[fc][val]
		if !ok {
			f.none = true
			continue
		}
		fd := l.fields[fc]
		f.mask |= (1<<fd.width - 1) << fd.shift
		f.want |= code << fd.shift
	}
	f.minDur, f.maxDur, f.minVirality = q.MinDuration, q.MaxDuration, q.MinVirality
	f.needsClip = f.minDur != nil || f.maxDur != nil || f.minVirality != nil
	return f
}

// passes checks c against the bounds, as Postgres compares: a clip
// without the value fails them.
func (f *filter) passes(c *listedClip) bool {
	if (f.minDur != nil || f.maxDur != nil) && !c.hasLength {
		return false
	}
	if f.minDur != nil && c.duration < *f.minDur {
		return false
	}
	if f.maxDur != nil && c.duration > *f.maxDur {
		return false
	}
	return f.minVirality == nil || (c.virality >= 0 && int(c.virality) >= *f.minVirality)
}

// listedPage is what a page of listings found.
type listedPage struct {
	pos []int32
	// total is the number of matches, when exact says it is known.
	total int
	exact bool
}

// at is the i-th entry of the order, ascending or descending: ascending,
// the keyed then the others; descending, the keyed backwards, then the
// others backwards (the others' key is the least of all then).
func (o *order) at(i int, desc bool) int {
	if !desc {
		return i
	}
	if i < o.keyed {
		return o.keyed - 1 - i
	}
	return len(o.pos) - 1 - (i - o.keyed)
}

func (l *listings) order(by string) *order { return &l.orders[slices.Index(sortOrders[:], by)] }

// page finds the matches from the from-th entry of the order by
// (descending or not) on, skipping skip of them, up to want; then counts
// on up to CountBound matches. total counts the matches from the from-th
// entry, exact when the scan reached the end. ok is false when the filter
// passes too few entries to fill the page within maxListingScan.
func (l *listings) page(by string, desc bool, f filter, from, skip, want int) (p listedPage, ok bool) {
	o := l.order(by)
	n := len(o.pos)
	if f.none {
		return listedPage{exact: true}, true
	}
	if f.mask == 0 && !f.needsClip {
		for i := from + skip; i < min(n, from+skip+want); i++ {
			p.pos = append(p.pos, o.pos[o.at(i, desc)])
		}
		return listedPage{pos: p.pos, total: n - from, exact: true}, true
	}
	matched, i := 0, from
	for ; i < n && len(p.pos) < want; i++ {
		if i-from >= maxListingScan {
			return listedPage{}, false
		}
		j := o.at(i, desc)
		if o.attrs[j]&f.mask != f.want || (f.needsClip && !f.passes(&l.clips[o.pos[j]])) {
			continue
		}
		if matched >= skip {
			p.pos = append(p.pos, o.pos[j])
		}
		matched++
	}
	// Count on, as far as a total is counted exactly.
	for ; i < n && matched <= CountBound && i-from < maxListingScan; i++ {
		j := o.at(i, desc)
		if o.attrs[j]&f.mask == f.want && (!f.needsClip || f.passes(&l.clips[o.pos[j]])) {
			matched++
		}
	}
	if i == n {
		p.total, p.exact = matched, true
	}
	return p, true
}

// after is the index in the order by (descending or not) of the first
// entry past a cursor's sort key and id, as the page statement's keyset
// condition (paging.Order.After) finds it; ok is false for a key of
// another type than the sort's.
func (l *listings) after(by string, desc bool, key any, id uuid.UUID) (int, bool) {
	o := l.order(by)
	valid := true
	i := sort.Search(len(o.pos), func(i int) bool {
		pos := o.pos[o.at(i, desc)]
		c, ok := compareKeys(l.key(by, desc, pos), key)
		valid = valid && ok
		if c == 0 {
			c = bytes.Compare(l.clips[pos].id[:], id[:])
		}
		if desc {
			return c < 0
		}
		return c > 0
	})
	return i, valid
}

// compareKeys compares an entry's sort key with a cursor's, as Postgres
// compares the column with the argument: times at microseconds (as pgx
// sends them), whole numbers as int8, durations as float8.
func compareKeys(entry, cursor any) (int, bool) {
	switch e := entry.(type) {
	case time.Time:
		c, ok := cursor.(time.Time)
		return cmp.Compare(e.UnixMicro(), c.Unix()*1_000_000+int64(c.Nanosecond())/1000), ok
	case float64:
		c, ok := cursor.(float64)
		return cmp.Compare(e, c), ok
	case int64, int32:
		c, ok := cursor.(int64)
		return cmp.Compare(toInt64(e), c), ok
	}
	return 0, false
}

func toInt64(v any) int64 {
	if i, ok := v.(int32); ok {
		return int64(i)
	}
	return v.(int64)
}

// key is the sort key of clip pos in the order by, as the page statement
// gives it (sortKey): a clip without the key has the one past the end of
// the order in that direction.
func (l *listings) key(by string, desc bool, pos int32) any {
	c := &l.clips[pos]
	switch by {
	case SortPrice:
		return c.price
	case SortDuration:
		switch {
		case c.hasLength:
			return c.duration
		case desc:
			return float64(-1)
		}
		return math.Inf(1)
	case SortVirality:
		switch {
		case c.virality >= 0:
			return c.virality
		case desc:
			return int32(-1)
		}
		return int32(101)
	}
	return time.UnixMicro(c.created)
}

// fromListings answers list q from l: ok is false when l cannot (a filter
// too rare for a scan), and the page statement must. The total is exact
// when the scan saw every match; otherwise it is the page statement's
// (counter), which for a total past CountBound is the planner's estimate,
// kept per filter set.
func (s *Service) fromListings(ctx context.Context, q Query, l *listings) (rows []row, total int, exact, ok bool, err error) {
	by, desc := q.SortBy, q.SortOrder != SortAsc
	if by == SortRelevance {
		by = SortCreatedAt
	}
	from := 0
	if q.after != nil {
		var known bool
		if from, known = l.after(by, desc, q.after.Keys[0], q.after.ID); !known {
			return nil, 0, false, false, nil
		}
	}
	f := l.filter(q)
	p, ok := l.page(by, desc, f, from, q.Offset, q.Limit+1)
	if !ok {
		return nil, 0, false, false, nil
	}
	if q.after != nil && !f.none {
		// The scan began at the cursor and saw only the matches after
		// it: without a filter, every clip matches.
		p.exact, p.total = f.mask == 0 && !f.needsClip, len(l.clips)
	}
	ids := make([]uuid.UUID, len(p.pos))
	for i, pos := range p.pos {
		ids[i] = l.clips[pos].id
	}
	videos, err := s.catalog.ListedUnder(ctx, ids, l.version)
	if err != nil {
		return nil, 0, false, true, err
	}
	if len(videos) != len(ids) {
		// A clip left the catalog without moving its version (a
		// hand-made change): the page statement answers.
		return nil, 0, false, false, nil
	}
	rows = make([]row, len(videos))
	for i, v := range videos {
		rows[i] = row{video: v, key: l.key(by, desc, p.pos[i])}
	}
	switch {
	case p.exact:
		return rows, p.total, true, true, nil
	case q.after == nil && len(rows) <= q.Limit && (len(rows) > 0 || q.Offset == 0):
		return rows, q.Offset + len(rows), true, true, nil
	}
	err = s.catalog.Read(ctx, false, func(db *pgxpool.Pool) error {
		var err error
		total, exact, err = s.newCounter(ctx, db, buildSearch(q, nil, ""), true).total()
		return err
	})
	return rows, total, exact, true, err
}
