// Package durable keeps paged's state files crash-safe.
//
// A state is a snapshot file plus numbered segments of appended records
// beside it (Log). Every record is framed with its length and a CRC-32C, so
// a torn write at the end of a segment (a power cut, a full disk) is
// recognised, never read as data, and cut off. Records are written with
// one write call each, which makes them survive a kill -9 of the process
// at once, and fsynced in groups (one fsync for every record appended
// while the previous fsync ran), which makes them survive a power cut
// before Wait returns.
//
// A file that cannot be read or parsed is moved aside to
// <file>.corrupt.<unix seconds> and reported (Reporter); the state goes on
// with what could be read. A file that cannot be written, from the start
// on or later, keeps the state in memory, reports the failure and retries
// every RetryInterval; Wait answers nil only for a record that is on disk.
package durable

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WriteFileAtomic replaces path with b: a temporary file in the same
// directory is written, fsynced and renamed over path, and the directory
// is fsynced, so that path holds either its old or its new content after
// a crash, never a mix.
func WriteFileAtomic(path string, b []byte) error {
	return writeAtomic(path, func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

func writeAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename: a no-op
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the directory's entries (a rename, a new or removed file)
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// CorruptSuffix starts the suffix of a file moved aside.
const CorruptSuffix = ".corrupt."

// MoveAside renames path to path.corrupt.<unix seconds> (with -1, -2...
// added when that name is taken) and returns the new name.
func MoveAside(path string, now time.Time) (string, error) {
	base := fmt.Sprintf("%s%s%d", path, CorruptSuffix, now.Unix())
	to := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); os.IsNotExist(err) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(path, to); err != nil {
		return "", err
	}
	_ = syncDir(filepath.Dir(path))
	return to, nil
}

// MakeStorageDir makes dir (storage.path) if it is missing, with an error
// that names it. It does not ask for files to be writable there: a full
// disk or a read-only mount is no reason not to start and page, since
// each Log keeps its state in memory, reports the file failing and
// retries.
func MakeStorageDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("storage path %s cannot be created: %w", dir, err)
	}
	return nil
}
