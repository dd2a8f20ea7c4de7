package durable

import (
	"io"
	"os"
	"path/filepath"
)

// disk is what a Log writes: new segments and snapshots. Tests replace it
// (Options.disk) to make writes fail as a full disk makes them fail, at
// the moments only a race would otherwise reach.
type disk interface {
	// create makes an empty segment to append to, its name durable in
	// the directory.
	create(path string) (segmentFile, error)
	// replace writes path atomically: write-temp, fsync, rename.
	replace(path string, write func(io.Writer) error) error
}

// segmentFile is an open segment (an *os.File).
type segmentFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// osDisk is the disk of a Log outside tests.
type osDisk struct{}

func (osDisk) create(path string) (segmentFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (osDisk) replace(path string, write func(io.Writer) error) error {
	return writeAtomic(path, func(f *os.File) error { return write(f) })
}
