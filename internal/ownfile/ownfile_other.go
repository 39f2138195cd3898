//go:build !windows

package ownfile

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenFile opens path with os.OpenFile's flags; a file it creates is 0600.
func OpenFile(path string, flag int) (*os.File, error) { return os.OpenFile(path, flag, 0o600) }

// MkdirAll creates dir and the parents it lacks, 0700. A directory that is
// there already is left as it is.
func MkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

// EnsureDir makes dir a private directory: created 0700 when missing, its
// mode tightened to 0700 when group or others may use it.
func EnsureDir(d string) error {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("%s is readable by others and cannot be made private: %w", d, err)
		}
	}
	return nil
}

// Rename replaces to with from (rename(2): atomic, readers that have the
// old file open keep reading it).
func Rename(from, to string) error { return os.Rename(from, to) }

// PlaceNew gives the complete file from the name to, failing with an error
// that wraps fs.ErrExist when to is there already: a hard link, which no
// other writer can race, then the caller removes from.
func PlaceNew(from, to string) error { return os.Link(from, to) }

// SyncDir makes the directory's entries (a rename, a new file) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// File says whether others can get at the file path (fi its information):
// whether its mode grants group or others anything.
func File(path string, fi fs.FileInfo) Access {
	perm := fi.Mode().Perm()
	return Access{Open: perm&0o077 != 0, Detail: fmt.Sprintf("mode %04o", perm), Hint: FileHint(path)}
}

// Dir says whether the directory path (fi its information) is private: its
// mode is 0700 exactly. Detail is the mode ("0700").
func Dir(path string, fi fs.FileInfo) Access {
	perm := fi.Mode().Perm()
	return Access{Open: perm != 0o700, Detail: fmt.Sprintf("%04o", perm), Hint: DirHint(path)}
}

// FileHint is the command that makes the file path private.
func FileHint(path string) string { return "chmod 600 " + path }

// DirHint is the command that makes the directory path private.
func DirHint(path string) string { return "chmod 700 " + path }

// PrivateWords is how a hint names a private file: "mode 0600".
const PrivateWords = "mode 0600"

// UnderWine reports whether this program runs under Wine: never, here.
func UnderWine() bool { return false }
