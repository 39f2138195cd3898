package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// ErrNotDurable is wrapped by the error of a write whose new file is in
// place, seen by every reader from then on, but whose directory could not
// be synced (fsync failed: EIO, EMFILE): a crash of the machine (not of
// the process) before the kernel writes the directory out may bring the
// old file back. The write is made: a caller that reported it as not made
// would say one thing while the disk says another. Each caller decides
// what the doubt costs (InPlace): most go on as written; one that is about
// to send a message on the strength of the write does not (a message sent
// while a crash could bring its record back queued could be sent twice).
var ErrNotDurable = errors.New("not synced to disk (a crash of the machine may undo it)")

// InPlace reports whether a write with this error was made: none, or only
// the directory's fsync failed (ErrNotDurable).
func InPlace(err error) bool { return err == nil || errors.Is(err, ErrNotDurable) }

// WriteFileAtomic replaces dir/name with data so that a reader sees either
// the old file or the new one, never a part: write a temporary file in the
// same directory, fsync it, rename it over the old one, fsync the directory
// (on Windows, which cannot flush a directory, the rename is left to the
// file system's journal; the rename waits out a reader of the old file,
// ownfile.Rename). The file is private to its owner (0600; an owner-only
// ACL on Windows). An error of the last step wraps ErrNotDurable: the new
// file is in place.
func WriteFileAtomic(dir, name string, data []byte) error {
	return writeFileAtomic(dir, name, data, syncDir)
}

func writeFileAtomic(dir, name string, data []byte, sync func(string) error) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	if err := ownfile.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return notDurable(filepath.Join(dir, name), sync(dir))
}

// createExclusive writes dir/name like WriteFileAtomic but fails with an
// error wrapping fs.ErrExist when the file is already there: the complete
// temporary file is put into place by an operation no other writer can
// race (a hard link on Unix, a rename that does not replace on Windows).
// An error of the directory's fsync wraps ErrNotDurable: the file is in
// place.
func createExclusive(dir, name string, data []byte, sync func(string) error) error {
	tmp, err := writeTemp(dir, name, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := ownfile.PlaceNew(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return notDurable(filepath.Join(dir, name), sync(dir))
}

// notDurable is the error of a directory fsync that failed after path was
// put in place.
func notDurable(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s is in place, but %w: fsync of its directory: %w", path, ErrNotDurable, err)
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

// syncDir flushes a directory's entries (nothing on Windows: ownfile.SyncDir).
func syncDir(dir string) error { return ownfile.SyncDir(dir) }

// dirSyncFault is a Store's fault injection (SetDirSyncFault).
type dirSyncFault = atomic.Pointer[func(dir string) error]

// SetDirSyncFault makes the store's fsyncs of its directories fail as
// fault says (nil: they succeed), after the file they follow was put in
// place: tests of what a caller does with ErrNotDurable use it, on a real
// store. nil removes the fault.
func (s *Store) SetDirSyncFault(fault func(dir string) error) {
	if fault == nil {
		s.syncFault.Store(nil)
		return
	}
	s.syncFault.Store(&fault)
}

// syncDir syncs one of the store's directories, as SetDirSyncFault says.
func (s *Store) syncDir(dir string) error {
	if f := s.syncFault.Load(); f != nil {
		if err := (*f)(dir); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// writeAtomic is WriteFileAtomic with the store's directory fsync.
func (s *Store) writeAtomic(dir, name string, data []byte) error {
	return writeFileAtomic(dir, name, data, s.syncDir)
}
