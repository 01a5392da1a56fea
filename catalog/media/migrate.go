package media

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"broll/internal/apperr"
)

// MigrateResult counts what a media migration did.
type MigrateResult struct {
	Files   int   `json:"files"`
	Copied  int   `json:"copied"`
	Skipped int   `json:"skipped"`
	Bytes   int64 `json:"bytes_copied"`
}

// Migrate copies every file of a local store into another store under
// the same key. A file already there with the same size is skipped, so an
// interrupted migration is resumed by running it again. Keys do not change,
// so the database needs no update: switch BROLL_MEDIA_STORE once it is done.
func Migrate(ctx context.Context, from *Local, to Store, progress func(done, total int)) (MigrateResult, error) {
	var keys []string
	err := filepath.WalkDir(from.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// .put-* are the temporary files of writes in progress.
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".put-") {
			rel, err := filepath.Rel(from.Dir(), p)
			if err != nil {
				return err
			}
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return MigrateResult{}, fmt.Errorf("media migrate: %w", err)
	}
	res := MigrateResult{Files: len(keys)}
	for i, key := range keys {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		f, err := from.Open(ctx, key)
		if err != nil {
			return res, fmt.Errorf("media migrate %s: %w", key, err)
		}
		size, err := to.Stat(ctx, key)
		switch {
		case err == nil && size == f.Size():
			res.Skipped++
			f.Close()
		case err != nil && apperr.CodeOf(err) != apperr.NotFound:
			f.Close()
			return res, fmt.Errorf("media migrate %s: %w", key, err)
		default:
			// The local file's *os.File lets the store send its size up front.
			n, err := to.Put(ctx, key, f.(*localFile).File)
			f.Close()
			if err != nil {
				return res, fmt.Errorf("media migrate %s: %w", key, err)
			}
			res.Copied++
			res.Bytes += n
		}
		if progress != nil && ((i+1)%100 == 0 || i+1 == len(keys)) {
			progress(i+1, len(keys))
		}
	}
	return res, nil
}
