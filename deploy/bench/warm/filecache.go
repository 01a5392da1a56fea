package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// dropFileCache asks the kernel to forget the cached pages of every file
// of the database dbURL names (its directory under base/), after writing
// back what is dirty: the next read of them comes from the disk, as on a
// machine that has just started. Other databases and programs keep
// theirs. It returns the bytes of the files.
func dropFileCache(ctx context.Context, dbURL string) (int64, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var dataDir string
	var dbOID uint32
	if err := conn.QueryRow(ctx, `SELECT current_setting('data_directory'), oid FROM pg_database WHERE datname = current_database()`).
		Scan(&dataDir, &dbOID); err != nil {
		return 0, err
	}
	var total int64
	err = filepath.WalkDir(filepath.Join(dataDir, "base", fmt.Sprint(dbOID)), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fd := int(f.Fd())
		if err := unix.Fdatasync(fd); err != nil {
			return err
		}
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return err
		}
		if st, err := f.Stat(); err == nil {
			total += st.Size()
		}
		return nil
	})
	return total, err
}
