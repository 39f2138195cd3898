package store

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// WriteFileAtomic replaces dir/name with data so that a reader sees either
// the old file or the new one, never a part: write a temporary file in the
// same directory, fsync it, rename it over the old one, fsync the directory
// (on Windows, which cannot flush a directory, the rename is left to the
// file system's journal; the rename waits out a reader of the old file,
// ownfile.Rename). The file is private to its owner (0600; an owner-only
// ACL on Windows).
func WriteFileAtomic(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	if err := ownfile.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return ownfile.SyncDir(dir)
}

// createExclusive writes dir/name like WriteFileAtomic but fails with an
// error wrapping fs.ErrExist when the file is already there: the complete
// temporary file is put into place by an operation no other writer can
// race (a hard link on Unix, a rename that does not replace on Windows).
func createExclusive(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := ownfile.PlaceNew(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return ownfile.SyncDir(dir)
}

func writeTemp(dir, name string, data []byte) (string, error) {
	f, err := ownfile.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}
