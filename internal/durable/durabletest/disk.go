// Package durabletest gives tests a real storage path that cannot be
// written: a small tmpfs that is full, or mounted read-only. Mounting
// needs root (CAP_SYS_ADMIN); where it is not allowed the test is
// skipped with the reason.
package durabletest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Disk is a tmpfs mounted for one test and unmounted in its cleanup.
type Disk struct {
	Dir string
	t   testing.TB
}

// Mount mounts a tmpfs of size bytes at a new directory. It skips the
// test where mounting is not allowed.
func Mount(t testing.TB, size int) *Disk {
	t.Helper()
	d, err := TryMount(t, size)
	if err != nil {
		t.Skipf("%v; run as root to test it", err)
	}
	return d
}

// TryMount is Mount for a caller that decides what a machine without
// mounts means (a suite that must not skip under CI): it returns the
// error instead of skipping.
func TryMount(t testing.TB, size int) (*Disk, error) {
	t.Helper()
	dir := t.TempDir()
	opts := "size=" + strconv.Itoa(size) + ",mode=0755"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return nil, fmt.Errorf("cannot mount a tmpfs for a full or read-only disk: %w", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, t: t}, nil
}

// fill is the file that takes the free space.
const fill = ".fill"

// Fill writes a file until the disk is full: creating a file still works
// (there are inodes left), as on a full volume, but writing a byte fails
// with ENOSPC.
func (d *Disk) Fill() {
	d.t.Helper()
	f, err := os.OpenFile(filepath.Join(d.Dir, fill), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			d.t.Fatal(err)
		}
	}
	// The last partial page too.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			return
		}
	}
}

// Free removes what Fill wrote.
func (d *Disk) Free() {
	d.t.Helper()
	if err := os.Remove(filepath.Join(d.Dir, fill)); err != nil && !os.IsNotExist(err) {
		d.t.Fatal(err)
	}
}

// ReadOnly remounts the disk read-only (ro true) or read-write.
func (d *Disk) ReadOnly(ro bool) {
	d.t.Helper()
	flags := uintptr(syscall.MS_REMOUNT)
	if ro {
		flags |= syscall.MS_RDONLY
	}
	if err := syscall.Mount("tmpfs", d.Dir, "tmpfs", flags, ""); err != nil {
		d.t.Fatalf("remount %s (read-only %v): %v", d.Dir, ro, err)
	}
}
