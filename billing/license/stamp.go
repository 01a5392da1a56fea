package license

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/telemetry"
)

// The licence travels with the file: the full-quality file a live
// purchase downloads carries the licence id and its verify URL in its
// container's metadata. The worker makes that stamped copy per purchase,
// after the purchase committed (never inside it: the purchase statement
// holds the pool's lock), by a remux that copies every stream as it is,
// and stores it beside the original in the media store under
// licensed/<licence id>/<the original's file name>. Table license_stamps
// (migration 00024) records it.
//
// Until the copy is stored the download serves the original, and the
// licence is no less valid for it: the work is asked for once per purchase
// batch right after its commit (best effort: one task for the batch, which
// a worker fans out to one task per purchase), again by every download that
// finds no copy (a task per purchase, deduplicated by its id), and by the
// worker's periodic sweep (SweepLost), which finds the recent purchases
// still without a copy and asks for theirs: a queue that lost the first
// request (Redis away) delays a stamp by a sweep, never loses it, with or
// without a download. Test purchases serve previews and get no
// stamp; a container that cannot carry the text (GIF, JPEG, PNG) is
// recorded as such and its original served.
//
// Retention: every stamped copy is one more copy of its file in the store.
// PruneStamped removes those of old purchases; their next download serves
// the original and asks for the copy again. (The sweep looks only at the
// purchases of its window, SweepWindow, so it does not remake pruned ones.)
//
// Revocation: a revoked licence's file is no longer delivered, so its
// stamped copy is removed (RemoveRevoked, which Service.Revoke calls), and
// no copy is made for it any more (Stamp, FanOut and the sweep skip it).

// StampQueue hands stamps to the worker; internal/tasks implements it with
// asynq.
type StampQueue interface {
	// EnqueueStamps queues one task per purchase, deduplicated by its id.
	EnqueueStamps(ctx context.Context, purchaseIDs []uuid.UUID) error
	// EnqueueStampBatch queues one task for the purchases of one batch.
	EnqueueStampBatch(ctx context.Context, purchaseIDs []uuid.UUID) error
}

// StamperOptions are what a Stamper is built from.
type StamperOptions struct {
	// Media is the store of the originals and their stamped copies; nil
	// makes no copy (a process without the store only asks for them).
	Media media.Store
	// Queue takes the requests for stamps; nil: none are asked for.
	Queue StampQueue
	// BaseURL is the service's public URL, as for ServiceOptions.
	BaseURL string
	// Logger receives requests that failed (a download goes on without).
	Logger *slog.Logger
}

// Stamper makes, finds and prunes the stamped copies of purchases' files.
type Stamper struct {
	pool *pgxpool.Pool
	o    StamperOptions

	// pending are the purchases of the batches committed since the last
	// flush (RequestBatch); a flush is due while flushing.
	mu       sync.Mutex
	pending  []uuid.UUID
	flushing bool
	// trace is the traceparent of the first batch gathered since the last
	// flush: the flush's task continues its trace.
	trace string
}

// Batches' requests are gathered for coalesceFor and sent as one task of at
// most flushChunk purchases: the purchase path pays a slice append, and
// Redis one enqueue per interval rather than one per batch. Past
// maxPending waiting purchases, more are dropped (their downloads ask).
const (
	coalesceFor = 250 * time.Millisecond
	flushChunk  = 1000
	maxPending  = 20000
)

// NewStamper returns the stamper over pool.
func NewStamper(pool *pgxpool.Pool, o StamperOptions) *Stamper {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Stamper{pool: pool, o: o}
}

// StampedPrefix starts the key of every stamped copy.
const StampedPrefix = "licensed/"

// StampKey is where the stamped copy of licence id's file is kept, beside
// the original (whose file name it keeps, extension included).
func StampKey(id, original string) string { return StampedPrefix + id + "/" + path.Base(original) }

// StampComment is the text a stamped file carries.
func StampComment(id, verifyURL string) string {
	return "Licence " + id + "; verify at " + verifyURL
}

// requestTimeout bounds a request for stamps made beside a download or a
// purchase: the queue being slow must not hold either up.
const requestTimeout = 2 * time.Second

// Request asks for purchase id's stamped copy (a download found none). It
// never fails the caller: a request the queue refuses is logged, and the
// next download asks again.
func (s *Stamper) Request(ctx context.Context, id uuid.UUID) {
	if s == nil || s.o.Queue == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	if err := s.o.Queue.EnqueueStamps(ctx, []uuid.UUID{id}); err != nil {
		s.o.Logger.Warn("licence stamp not queued; the next download asks again", "purchase_id", id.String(), "error", err.Error())
	}
}

// RequestBatch asks for the stamped copies of the purchases one batch
// committed, best effort as Request: they join those of the batches around
// it and go to the queue together, coalesceFor later, as one task per
// flushChunk purchases. It never waits on Redis. The task continues the
// trace of the first batch (ctx) gathered into it.
func (s *Stamper) RequestBatch(ctx context.Context, ids []uuid.UUID) {
	if s == nil || s.o.Queue == nil || len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending)+len(ids) > maxPending {
		return
	}
	if len(s.pending) == 0 {
		s.trace = telemetry.Traceparent(ctx)
	}
	s.pending = append(s.pending, ids...)
	if !s.flushing {
		s.flushing = true
		time.AfterFunc(coalesceFor, s.flush)
	}
}

// flush sends what RequestBatch gathered.
func (s *Stamper) flush() {
	s.mu.Lock()
	ids, traced := s.pending, telemetry.FromTraceparent(context.Background(), s.trace)
	s.pending, s.flushing, s.trace = nil, false, ""
	s.mu.Unlock()
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), flushChunk)]
		ids = ids[len(chunk):]
		ctx, cancel := context.WithTimeout(traced, requestTimeout)
		err := s.o.Queue.EnqueueStampBatch(ctx, chunk)
		cancel()
		if err != nil {
			s.o.Logger.Warn("licence stamps not queued; downloads ask again", "purchases", len(chunk), "error", err.Error())
		}
	}
}

// FanOut queues a stamp task for each purchase of ids that needs one (live,
// without a copy made from its clip's current file), for a worker that
// took a batch's task.
func (s *Stamper) FanOut(ctx context.Context, ids []uuid.UUID) (int, error) {
	if s.o.Queue == nil || len(ids) == 0 {
		return 0, nil
	}
	need, err := database.Select(ctx, s.pool, pgx.RowTo[uuid.UUID], unstampedSQL, ids)
	if err != nil {
		return 0, fmt.Errorf("licence stamps: %w", err)
	}
	if err := s.o.Queue.EnqueueStamps(ctx, need); err != nil {
		return 0, err
	}
	return len(need), nil
}

// StampOutcome says what Stamp did.
type StampOutcome string

const (
	// Stamped: the copy was made and stored.
	Stamped StampOutcome = "stamped"
	// StampCurrent: a copy made from the clip's current file was there.
	StampCurrent StampOutcome = "current"
	// StampNotNeeded: a test purchase, whose downloads serve the preview.
	StampNotNeeded StampOutcome = "not_needed"
	// StampUnsupported: the container cannot carry the licence; recorded,
	// the original is served.
	StampUnsupported StampOutcome = "unsupported"
	// StampRevoked: the licence was revoked; no copy is made, and one made
	// before is removed.
	StampRevoked StampOutcome = "revoked"
)

// ErrPurchaseGone is a stamp asked for a purchase that does not exist.
var ErrPurchaseGone = errors.New("licence stamp: no such purchase")

type stampSource struct {
	LicenseID  string
	Livemode   bool
	Revoked    bool
	Original   string
	Recorded   bool
	StampedKey string
	Current    bool
}

// Stamp makes purchase id's stamped copy unless a current one is stored.
// A failure (the store, ffmpeg) is returned for the worker to retry;
// MarkUnstampable records the last one.
func (s *Stamper) Stamp(ctx context.Context, id uuid.UUID) (StampOutcome, error) {
	if s.o.Media == nil {
		return "", errors.New("licence stamp: no media store")
	}
	rows, err := s.pool.Query(ctx, stampSourceSQL, id)
	if err != nil {
		return "", fmt.Errorf("licence stamp: %w", err)
	}
	src, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[stampSource])
	if database.NoRows(err) {
		return "", ErrPurchaseGone
	}
	if err != nil {
		return "", fmt.Errorf("licence stamp: %w", err)
	}
	switch {
	case src.Revoked:
		if _, err := s.RemoveRevoked(ctx, src.LicenseID); err != nil {
			return "", err
		}
		return StampRevoked, nil
	case !src.Livemode:
		return StampNotNeeded, nil
	case src.Recorded && src.Current && src.StampedKey == "":
		return StampUnsupported, nil
	case src.Recorded && src.Current:
		// Made before: still there (a prune or a lost file remakes it)?
		if _, err := s.o.Media.Stat(ctx, src.StampedKey); err == nil {
			return StampCurrent, nil
		} else if apperr.CodeOf(err) != apperr.NotFound {
			return "", err
		}
	}
	format, ok := media.StampFormat(src.Original)
	if !ok {
		reason := fmt.Sprintf("a %s file cannot carry the licence in its metadata", path.Ext(src.Original))
		if _, err := s.pool.Exec(ctx, recordStampSQL, id, src.Original, nil, nil, reason); err != nil {
			return "", fmt.Errorf("licence stamp: %w", err)
		}
		return StampUnsupported, nil
	}
	key := StampKey(src.LicenseID, src.Original)
	size, err := s.remux(ctx, src.Original, key, format, StampComment(src.LicenseID, verifyURL(s.o.BaseURL, src.LicenseID)))
	if err != nil {
		return "", err
	}
	tag, err := s.pool.Exec(ctx, recordStampSQL, id, src.Original, key, size, nil)
	if err != nil {
		return "", fmt.Errorf("licence stamp: %w", err)
	}
	if tag.RowsAffected() == 0 {
		// Revoked while the copy was made: it goes, with any made before.
		s.remove(ctx, key)
		if _, err := s.RemoveRevoked(ctx, src.LicenseID); err != nil {
			return "", err
		}
		return StampRevoked, nil
	}
	if src.StampedKey != "" && src.StampedKey != key {
		// The copy of a file replaced since, under another name.
		s.remove(ctx, src.StampedKey)
	}
	return Stamped, nil
}

// remux writes the stamped copy of original into a temporary file and
// stores it under key, returning its size.
func (s *Stamper) remux(ctx context.Context, original, key, format, comment string) (int64, error) {
	src, err := media.Source(ctx, s.o.Media, original)
	if err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp("", "broll-stamp-*")
	if err != nil {
		return 0, fmt.Errorf("licence stamp: %w", err)
	}
	defer os.RemoveAll(tmp)
	dst := filepath.Join(tmp, "stamped"+path.Ext(original))
	if err := media.Stamp(ctx, src, dst, format, comment); err != nil {
		return 0, fmt.Errorf("licence stamp: %w", err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return 0, fmt.Errorf("licence stamp: %w", err)
	}
	defer f.Close()
	return s.o.Media.Put(ctx, key, f)
}

// MaxStampReasonChars bounds the reason recorded for a file left unstamped.
const MaxStampReasonChars = 500

// MarkUnstampable records that purchase id's file could not be stamped
// (the worker's last attempt failed): its downloads serve the original
// and stop asking.
func (s *Stamper) MarkUnstampable(ctx context.Context, id uuid.UUID, reason string) error {
	if reason == "" {
		reason = "the stamp failed"
	}
	r := []rune(reason)
	if len(r) > MaxStampReasonChars {
		reason = string(r[:MaxStampReasonChars])
	}
	if _, err := s.pool.Exec(ctx, unstampableSQL, id, reason); err != nil {
		return fmt.Errorf("licence stamp: %w", err)
	}
	return nil
}

func (s *Stamper) remove(ctx context.Context, key string) {
	r, ok := s.o.Media.(media.Remover)
	if !ok {
		return
	}
	if err := r.Remove(ctx, key); err != nil {
		s.o.Logger.Warn("stale licence stamp not removed", "key", key, "error", err.Error())
	}
}

// PruneResult is what PruneStamped removed.
type PruneResult struct {
	Removed int   `json:"removed"`
	Bytes   int64 `json:"bytes"`
}

// pruneBatch is how many copies one round of PruneStamped removes.
const pruneBatch = 500

type prunable struct {
	PurchaseID uuid.UUID
	Key        string
	StampedAt  time.Time
}

// PruneStamped removes the stamped copies of purchases made before cutoff
// (but not copies remade since cutoff), files first and their records
// after: a download in between finds its copy missing and serves the
// original. A later download asks for the copy again.
func (s *Stamper) PruneStamped(ctx context.Context, cutoff time.Time) (PruneResult, error) {
	var out PruneResult
	r, ok := s.o.Media.(media.Remover)
	if !ok {
		return out, errors.New("licence stamps: the media store cannot remove files")
	}
	for {
		batch, err := database.Select(ctx, s.pool, pgx.RowToStructByPos[prunable], prunableStampsSQL, cutoff, pruneBatch)
		if err != nil {
			return out, fmt.Errorf("licence stamps: %w", err)
		}
		ids, at := make([]uuid.UUID, 0, len(batch)), make([]time.Time, 0, len(batch))
		var bytes int64
		for _, p := range batch {
			size, err := s.o.Media.Stat(ctx, p.Key)
			if err != nil && apperr.CodeOf(err) != apperr.NotFound {
				return out, err
			}
			if err := r.Remove(ctx, p.Key); err != nil {
				return out, err
			}
			ids, at, bytes = append(ids, p.PurchaseID), append(at, p.StampedAt), bytes+size
		}
		if _, err := s.pool.Exec(ctx, forgetStampsSQL, ids, at); err != nil {
			return out, fmt.Errorf("licence stamps: %w", err)
		}
		out.Removed, out.Bytes = out.Removed+len(batch), out.Bytes+bytes
		if len(batch) < pruneBatch {
			return out, nil
		}
	}
}

// RemoveRevoked removes the stamped copies of licence id once it is
// revoked, files first and their records after (a failure leaves the
// record, for the next call), and returns how many it removed. An active
// licence's copy is left alone.
func (s *Stamper) RemoveRevoked(ctx context.Context, id string) (int, error) {
	stamps, err := database.Select(ctx, s.pool, pgx.RowToStructByPos[prunable], revokedStampsSQL, id)
	if err != nil || len(stamps) == 0 {
		return 0, wrapStamps(err)
	}
	r, ok := s.o.Media.(media.Remover)
	if !ok {
		return 0, errors.New("licence stamps: the media store cannot remove files")
	}
	ids, at := make([]uuid.UUID, 0, len(stamps)), make([]time.Time, 0, len(stamps))
	for _, p := range stamps {
		if err := r.Remove(ctx, p.Key); err != nil {
			return 0, fmt.Errorf("licence stamps: remove the revoked licence's copy: %w", err)
		}
		ids, at = append(ids, p.PurchaseID), append(at, p.StampedAt)
	}
	if _, err := s.pool.Exec(ctx, forgetStampsSQL, ids, at); err != nil {
		return 0, wrapStamps(err)
	}
	return len(stamps), nil
}

// SweepWindow is how far back the sweep looks for purchases without a
// stamped copy: far enough to outlast a Redis outage, short enough never to
// reach the purchases whose copies PruneStamped removed on purpose (their
// downloads ask for them again), and to keep a sweep's cost to the
// window's purchases (one stamp lookup each; BenchmarkSweepLost).
const SweepWindow = 48 * time.Hour

// sweepBatch bounds the purchases one sweep asks for; the next takes the
// rest.
const sweepBatch = 1000

// SweepLost asks for the stamped copies of the live purchases made since
// now-SweepWindow that have none (their licence not revoked, no copy made
// from their clip's current file, none recorded as impossible), at most
// sweepBatch of them, oldest first, and returns how many it asked for.
// Their requests were lost (the queue was away when the purchase or a
// download asked) or are still queued: a stamp task is deduplicated by its
// purchase, so asking again costs a lookup. The worker runs it
// periodically.
func (s *Stamper) SweepLost(ctx context.Context, now time.Time) (int, error) {
	if s.o.Queue == nil {
		return 0, nil
	}
	ids, err := database.Select(ctx, s.pool, pgx.RowTo[uuid.UUID], lostStampsSQL, now.Add(-SweepWindow), sweepBatch)
	if err != nil || len(ids) == 0 {
		return 0, wrapStamps(err)
	}
	if err := s.o.Queue.EnqueueStamps(ctx, ids); err != nil {
		return 0, fmt.Errorf("licence stamps: %w", err)
	}
	return len(ids), nil
}

// wrapStamps prefixes err (nil stays nil).
func wrapStamps(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("licence stamps: %w", err)
}
