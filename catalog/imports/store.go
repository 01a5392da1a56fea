package imports

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/apperr"
)

// progressEvery is how many clips pass between two progress reports.
const progressEvery = 2000

// Copying media is file-system bound; a few writers in flight keep the
// disk busy without opening thousands of files at once.
const mediaWorkers = 8

// writeVideos copies the clips' files into media storage while streaming
// their rows into the staging table, then upserts them and commits. It
// records, in the same transaction, the jobs the clips need (job outbox):
// an embedding for the new ones and those whose embedded text changed, a
// media job for each but those put on sale at once because the importer
// probed their media (soundNow). It returns the jobs' ids. Files copied for a
// transaction that then fails stay behind under their clip's prefix; a
// rerun of the import overwrites them.
func (s *Service) writeVideos(ctx context.Context, clips []validVideo, progress func(done, total int)) (Result, []int64, error) {
	var res Result
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return res, nil, fmt.Errorf("import: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, sqlCreateImportTable); err != nil {
		return res, nil, fmt.Errorf("import: staging table: %w", err)
	}

	src := s.startMediaCopy(ctx, clips, progress)
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"import_clips"}, importColumns(), src)
	src.stop()
	if err != nil {
		if serr := src.Err(); serr != nil {
			return res, nil, fmt.Errorf("import: %w", serr)
		}
		return res, nil, fmt.Errorf("import: stage rows: %w", err)
	}

	rows, err := tx.Query(ctx, sqlUpsertClips)
	if err != nil {
		return res, nil, fmt.Errorf("import: write clips: %w", err)
	}
	var reembed []uuid.UUID
	var id uuid.UUID
	var created, changed bool
	_, err = pgx.ForEachRow(rows, []any{&id, &created, &changed}, func() error {
		if created {
			res.Created++
		} else {
			res.Updated++
		}
		if changed {
			reembed = append(reembed, id)
		}
		return nil
	})
	if err != nil {
		return res, nil, fmt.Errorf("import: write clips: %w", err)
	}
	sound, probeChanged, err := soundNow(ctx, tx, clips)
	if err != nil {
		return res, nil, fmt.Errorf("import: probed media: %w", err)
	}
	for _, id := range probeChanged {
		if !slices.Contains(reembed, id) {
			reembed = append(reembed, id)
		}
	}
	if s.queue != nil {
		res.Queued = len(reembed)
	}
	// A clip waiting for its probe is embedded by the media batch that
	// passes it (mediajobs.StoreProbed), with the text the probe settles.
	jobs, err := catalog.RecordJobs(ctx, tx, catalog.JobEmbed, slices.DeleteFunc(reembed, func(id uuid.UUID) bool { return !sound[id] }))
	if err != nil {
		return res, nil, fmt.Errorf("import: %w", err)
	}
	var probe []uuid.UUID
	for i := range clips {
		if !sound[clips[i].id] {
			probe = append(probe, clips[i].id)
		}
	}
	mediaJobs, err := catalog.RecordJobs(ctx, tx, catalog.JobMedia, probe)
	if err != nil {
		return res, nil, fmt.Errorf("import: %w", err)
	}
	jobs = append(jobs, mediaJobs...)
	if err := claimUploads(ctx, tx, clips); err != nil {
		return res, nil, err
	}
	if err := s.cat.Commit(ctx, tx); err != nil {
		return res, nil, fmt.Errorf("import: commit: %w", err)
	}
	return res, jobs, nil
}

// soundNow puts on sale, in the import's transaction, the clips whose
// media the importer probed and that brought their preview and thumbnail
// (nothing left for the worker to make), as the worker's media job would
// (catalog.SQLMediaDone). It returns them, and those whose embedded text the probe
// changed.
func soundNow(ctx context.Context, tx pgx.Tx, clips []validVideo) (map[uuid.UUID]bool, []uuid.UUID, error) {
	var probed []catalog.Probed
	for i := range clips {
		c := &clips[i]
		if c.probe != nil && c.thumbnail != "" && (c.preview != "" || c.probe.MediaType == "image") {
			probed = append(probed, catalog.Probed{ID: c.id, Probe: *c.probe})
		}
	}
	if len(probed) == 0 {
		return nil, nil, nil
	}
	rows, err := tx.Query(ctx, catalog.SQLMediaDone, catalog.MediaDoneArgs(probed)...)
	if err != nil {
		return nil, nil, err
	}
	sound := make(map[uuid.UUID]bool, len(probed))
	var changed []uuid.UUID
	var id uuid.UUID
	var textChanged, embedDue bool
	_, err = pgx.ForEachRow(rows, []any{&id, &textChanged, &embedDue}, func() error {
		sound[id] = true
		if textChanged {
			changed = append(changed, id)
		}
		return nil
	})
	return sound, changed, err
}

// claimUploads claims, in the import's transaction, the uploads its clips
// name; one another import took first fails the whole import (409).
func claimUploads(ctx context.Context, tx pgx.Tx, clips []validVideo) error {
	rows, err := tx.Query(ctx, sqlClaimUploads)
	if err != nil {
		return fmt.Errorf("import: claim uploads: %w", err)
	}
	lost, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("import: claim uploads: %w", err)
	}
	if len(lost) == 0 {
		return nil
	}
	var bad []LineError
	for _, c := range clips {
		if c.upload != nil && slices.Contains(lost, c.uploadID) {
			bad = append(bad, LineError{Line: c.line, Field: "upload_id",
				Message: "was taken by another clip while this import ran: an upload makes one clip"})
		}
	}
	return &Error{Lines: bad, Code: apperr.UploadClaimed}
}

// mediaCopy is a pgx.CopyFromSource fed by workers that store each clip's
// files and hand over its finished row, so disk and database work overlap.
// Row order does not matter to the staging table.
type mediaCopy struct {
	rows     chan []any
	cancel   context.CancelFunc
	progress func(done, total int)
	total    int
	done     int
	cur      []any

	mu  sync.Mutex
	err error
}

func (s *Service) startMediaCopy(ctx context.Context, clips []validVideo, progress func(done, total int)) *mediaCopy {
	ctx, cancel := context.WithCancel(ctx)
	m := &mediaCopy{rows: make(chan []any, 256), cancel: cancel, progress: progress, total: len(clips)}
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range clips {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(mediaWorkers, len(clips)) {
		wg.Go(func() {
			for i := range jobs {
				row, err := s.storeVideoMedia(ctx, &clips[i])
				if err != nil {
					m.fail(err)
					return
				}
				select {
				case m.rows <- row:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(m.rows)
	}()
	return m
}

func (m *mediaCopy) fail(err error) {
	m.mu.Lock()
	if m.err == nil {
		m.err = err
	}
	m.mu.Unlock()
	m.cancel()
}

// Next is called by CopyFrom from one goroutine, so progress calls are
// sequential (though not on the importer's goroutine).
func (m *mediaCopy) Next() bool {
	row, ok := <-m.rows
	if !ok {
		return false
	}
	m.cur = row
	m.done++
	if m.progress != nil && m.done%progressEvery == 0 && m.done < m.total {
		m.progress(m.done, m.total)
	}
	return true
}

func (m *mediaCopy) Values() ([]any, error) { return m.cur, nil }

func (m *mediaCopy) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// stop ends the workers (CopyFrom may have given up early) and waits for
// them, so nothing writes media after the import has returned.
func (m *mediaCopy) stop() {
	m.cancel()
	for range m.rows {
	}
}

// storeVideoMedia copies a clip's files under clips/<id>/ and returns the
// clip's staging row.
func (s *Service) storeVideoMedia(ctx context.Context, c *validVideo) ([]any, error) {
	prefix := "clips/" + c.id.String() + "/"
	var mediaKey string
	var size int64
	var uploadID *uuid.UUID
	if c.upload != nil {
		// The uploaded object stays where it is: no copy of a large file.
		mediaKey, size, uploadID = c.upload.Key, c.upload.Size, &c.uploadID
	} else {
		mediaKey = prefix + "full" + fileExt(c.media)
		var err error
		if size, err = s.putFile(ctx, mediaKey, c.media); err != nil {
			return nil, err
		}
	}
	var previewKey, thumbKey *string
	if c.preview != "" {
		k := prefix + "preview" + fileExt(c.preview)
		if _, err := s.putFile(ctx, k, c.preview); err != nil {
			return nil, err
		}
		previewKey = &k
	}
	if c.thumbnail != "" {
		k := prefix + "thumbnail" + fileExt(c.thumbnail)
		if _, err := s.putFile(ctx, k, c.thumbnail); err != nil {
			return nil, err
		}
		thumbKey = &k
	}
	in := &c.in
	var modelID, modelName *string
	if in.Model != nil {
		modelID, modelName = &in.Model.ID, &in.Model.Name
	}
	return []any{
		c.id, in.Title, in.Description, in.Tags, in.Emotion, in.Gender, nullable(in.AgeRange),
		nullable(in.Location), in.MediaType, nullable(in.Orientation), in.DurationSeconds,
		in.Width, in.Height, in.FPS, in.Difficulty, in.ViralityScore, modelID, modelName,
		mediaKey, media.ContentType(mediaKey), size, previewKey, thumbKey, uploadID,
	}, nil
}

func (s *Service) putFile(ctx context.Context, key, path string) (int64, error) {
	return media.PutFile(ctx, s.media, key, path)
}

// fileExt keeps the source's extension (lower-cased) so the stored file's
// content type follows from its key.
func fileExt(path string) string {
	return strings.ToLower(filepath.Ext(path))
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
