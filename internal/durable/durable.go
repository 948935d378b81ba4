// Package durable writes files so that a crash leaves the old content or
// the new, never a torn file, and so that a write that returned survives
// a power cut: one implementation for every package that keeps a file
// (ledger keys, audit state, canary enrollments, eval baselines).
package durable

import (
	"os"
	"path/filepath"
	"runtime"
)

// crash, when set (by tests), is called between the steps of a write; a
// test makes it exit the process to show what a crash there leaves.
var crash func(step string)

// WriteFile replaces path with data durably: a temporary file with a
// unique name in the same directory (so the rename stays on one
// filesystem and concurrent writers never share it), written, fsynced,
// renamed over path, then the directory fsynced so the rename itself is
// on disk. perm is the new file's mode. After a crash a stray
// ".tmp-NAME-*" file may remain beside path; it is never read.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Rename)
}

// CreateFile writes path durably as WriteFile does, but only if it does
// not exist: it returns an error wrapping fs.ErrExist if it does (two
// processes creating a key: one wins, the other reads the winner's).
func CreateFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Link)
}

func write(path string, data []byte, perm os.FileMode, place func(oldpath, newpath string) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a rename: nothing; after a link: the temporary name
	if err := f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		f.Close()
		return err
	}
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		f.Close()
		return err
	}
	step("half-written")
	if _, err := f.Write(data[half:]); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	step("synced")
	if err := place(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

func step(s string) {
	if crash != nil {
		crash(s)
	}
}

// SyncDir fsyncs a directory, making the names created or renamed in it
// durable. Windows cannot open a directory for syncing; NTFS journals
// the rename itself, so there it does nothing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
