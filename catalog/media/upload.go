package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/apperr"
	"broll/internal/database"
)

// Uploads are the files ops send for new clips (table media_uploads): each
// is asked for, takes its bytes once, and is then claimed by the one clip
// an import makes of it (the claim is the import's, in its transaction).
type Uploads struct {
	pool  *pgxpool.Pool
	media Store
}

// NewUploads returns the uploads recorded in pool, whose files go to media
// (nil: no upload can be asked for).
func NewUploads(pool *pgxpool.Pool, media Store) *Uploads {
	return &Uploads{pool: pool, media: media}
}

// UploadRequest is what an ops key asks to upload.
type UploadRequest struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// Upload is a place to put one file, and how.
type Upload struct {
	ID        uuid.UUID
	MediaKey  string
	Size      int64
	ExpiresAt time.Time
	// URL and Headers are the presigned PUT of an s3 store; empty with the
	// local store, whose PUT the API serves itself.
	URL     string
	Headers map[string]string
}

// uploadTypes are the files a clip can be made from: the content type an
// upload declares must be the one its extension stands for, so that the
// stored key names the type it is served with.
var uploadExts = []string{".mp4", ".webm", ".avi", ".gif", ".jpg", ".jpeg", ".png"}

// Create records an upload of at most maxBytes that works for ttl.
// keyID is the ops key that asked (uuid.Nil: none).
func (s *Uploads) Create(ctx context.Context, keyID uuid.UUID, req UploadRequest, maxBytes int64, ttl time.Duration) (Upload, error) {
	if s.media == nil {
		return Upload{}, errors.New("upload: no media store configured")
	}
	name := strings.TrimSpace(req.Filename)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case name == "" || utf8.RuneCountInString(name) > 255 || strings.ContainsAny(name, "/\\\x00"):
		return Upload{}, apperr.InvalidField("filename", "filename must be a file name of 1 to 255 characters without slashes")
	case !slices.Contains(uploadExts, ext):
		return Upload{}, apperr.InvalidField("filename", "filename must end in one of %s", strings.Join(uploadExts, ", "))
	case req.ContentType != ContentType(name):
		return Upload{}, apperr.InvalidField("content_type", "content_type must be %s for a %s file", ContentType(name), apperr.Clip(ext))
	case req.Size < 1 || req.Size > maxBytes:
		return Upload{}, apperr.InvalidField("size", "size must be between 1 and %d bytes", maxBytes)
	}
	id := uuid.New()
	up := Upload{ID: id, MediaKey: "uploads/" + id.String() + "/full" + ext, Size: req.Size,
		ExpiresAt: time.Now().Add(ttl).UTC().Truncate(time.Second)}
	if l, ok := s.media.(Linker); ok {
		var err error
		if up.URL, up.Headers, err = l.PutURL(ctx, up.MediaKey, req.ContentType, req.Size, ttl); err != nil {
			return Upload{}, err
		}
	}
	var key *uuid.UUID
	if keyID != uuid.Nil {
		key = &keyID
	}
	_, err := s.pool.Exec(ctx, sqlCreateUpload, id, key, name, req.ContentType, req.Size, up.MediaKey, up.ExpiresAt)
	if err != nil {
		return Upload{}, fmt.Errorf("upload: %w", err)
	}
	return up, nil
}

// uploadStager is a store an upload's PUT streams into (the local store):
// the bytes land under a staging key and take the upload's key in one
// rename once all of them are in, so the upload's key only ever holds a
// whole body, written once.
type uploadStager interface {
	Rename(ctx context.Context, from, to string) error
	Remove(ctx context.Context, key string) error
}

// Receive stores the body of an API-served PUT (the local store). Only
// the ops key that asked for the upload may write it (any other key is told
// it does not exist); the body streams to a staging key through a reader
// that fails when it is longer or shorter than the upload's size, and takes
// the upload's key in the same transaction that marks the upload complete,
// under the row's lock. An upload takes its bytes once: a PUT to a complete
// or claimed upload is refused before any byte is read, and a PUT that was
// still streaming when another finished (or an import claimed the upload)
// is refused at its end and leaves nothing behind.
func (s *Uploads) Receive(ctx context.Context, keyID, id uuid.UUID, contentType string, body io.Reader) error {
	stager, ok := s.media.(uploadStager)
	if !ok {
		return errors.New("upload: this media store takes no PUT through the API")
	}
	var key, ctype string
	var size int64
	var expires time.Time
	var complete, claimed bool
	err := s.pool.QueryRow(ctx, sqlUploadOfKey, id, keyID).
		Scan(&key, &ctype, &size, &expires, &complete, &claimed)
	if database.NoRows(err) {
		return apperr.NotFoundf("upload %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	switch {
	case claimed || complete:
		return uploadClosed(id, claimed)
	case time.Now().After(expires):
		return apperr.New(apperr.Forbidden, "upload %s expired at %s; ask for a new one", id, expires.Format(time.RFC3339))
	case contentType != ctype:
		return apperr.New(apperr.UnsupportedMedia, "this upload takes Content-Type %s", ctype)
	}
	staging := key + ".part-" + uuid.NewString()
	if _, err := s.media.Put(ctx, staging, &exactReader{r: body, left: size}); err != nil {
		var short *sizeError
		if errors.As(err, &short) {
			return apperr.New(apperr.Invalid, "the body must be exactly %d bytes, as the upload was asked for", size)
		}
		return err
	}
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		// The row lock orders this against other PUTs and against an
		// import's claim: whoever comes second sees the first's change.
		err := tx.QueryRow(ctx, sqlLockUpload, id).Scan(&complete, &claimed)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		if claimed || complete {
			return uploadClosed(id, claimed)
		}
		if err := stager.Rename(ctx, staging, key); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlUploadReceived, id); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		return nil
	})
	if err != nil {
		// Gone already when the rename happened.
		_ = stager.Remove(context.WithoutCancel(ctx), staging)
	}
	return err
}

func uploadClosed(id uuid.UUID, claimed bool) error {
	if claimed {
		return apperr.New(apperr.UploadClosed, "upload %s is a clip's file already; it takes no more bytes", id)
	}
	return apperr.New(apperr.UploadClosed, "upload %s has its file already; it takes no more bytes (ask for a new upload to send another file)", id)
}

type sizeError struct{}

func (*sizeError) Error() string { return "body size differs from the upload's" }

// exactReader passes exactly left bytes of r and fails on more or fewer.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		var one [1]byte
		if n, _ := io.ReadFull(e.r, one[:]); n > 0 {
			return 0, &sizeError{}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if e.left > 0 {
			return n, &sizeError{}
		}
		err = nil
	}
	return n, err
}

// UploadFile is an upload a clip may take as its full-quality file.
type UploadFile struct {
	Key  string
	Size int64
	// Complete: every byte is stored (the API's PUT finished, or the s3
	// object has the size the upload was asked with).
	Complete bool
	VideoID  uuid.UUID // the clip that took it already (uuid.Nil: none)
}

// Find finds an upload a clip names; ok is false for an unknown id,
// or an upload of another key than owner (uuid.Nil: any key, as for the
// operator's CLI). An s3 upload's PUT goes to the store, not through the
// API: it is complete once the object has the size asked for, which is
// checked here and recorded (the presigned PUT is conditional, so a stored
// object is never replaced).
func (s *Uploads) Find(ctx context.Context, owner, id uuid.UUID) (f UploadFile, ok bool, err error) {
	var video *uuid.UUID
	err = s.pool.QueryRow(ctx, sqlFindUpload, id, nullUUID(owner)).
		Scan(&f.Key, &f.Size, &f.Complete, &video)
	if database.NoRows(err) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("import: upload %s: %w", id, err)
	}
	if video != nil {
		f.VideoID = *video
	}
	if _, direct := s.media.(Linker); f.Complete || !direct {
		return f, true, nil
	}
	n, err := s.media.Stat(ctx, f.Key)
	if apperr.CodeOf(err) == apperr.NotFound || (err == nil && n != f.Size) {
		return f, true, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("import: upload %s: %w", id, err)
	}
	if _, err := s.pool.Exec(ctx, sqlUploadStored, id); err != nil {
		return f, false, fmt.Errorf("import: upload %s: %w", id, err)
	}
	f.Complete = true
	return f, true, nil
}

func nullUUID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
