package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// What prune removes: a record under its lock, archived records, and the
// files of replies/.

// Remove deletes the locked record and its cancel marker. The record's
// lock file stays: another process may have it open at this instant, and
// a lock file unlinked under it would let that process and the next one
// both hold "the" lock (it is a few bytes).
func (h *Handle) Remove() error {
	if h.lock == nil {
		return fmt.Errorf("task record %s: remove after the lock was released", h.id)
	}
	if err := os.Remove(h.s.recordPath(h.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove task record %s: %w", h.id, h.s.unwritable(err))
	}
	h.s.ClearCancel(h.id)
	if err := h.s.syncDir(h.s.tasksDir()); err != nil {
		// Gone for every reader: the caller counts it removed (InPlace).
		return fmt.Errorf("task record %s is removed, but %w: fsync of its directory: %w", h.id, ErrNotDurable, err)
	}
	return nil
}

// Archived is a record of tasks/archive/: an exchange a later message of
// the same context moved aside. Such a record is final and never written
// again.
type Archived struct {
	Path   string
	Record *Record
}

// ListArchived returns the archived records, newest first, and the errors
// of those that could not be read.
func (s *Store) ListArchived() ([]Archived, []error) {
	dir := filepath.Join(s.tasksDir(), "archive")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	var out []Archived
	var errs []error
	for _, e := range entries {
		// <contextId>.<unix nanoseconds>.json
		base, ok := strings.CutSuffix(e.Name(), ".json")
		i := strings.LastIndexByte(base, '.')
		if !ok || i <= 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		// (Errors name the archived file, not the live record's name.)
		r, err := s.readRecord(path, s.recordPath(base[:i]))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Archived{Path: path, Record: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Record.CreatedAt.After(out[j].Record.CreatedAt) })
	return out, errs
}

// RemoveArchived deletes an archived record ListArchived returned.
func (s *Store) RemoveArchived(a Archived) error {
	if filepath.Dir(a.Path) != filepath.Join(s.tasksDir(), "archive") {
		return fmt.Errorf("%s is not an archived record of %s", a.Path, s.dir)
	}
	if err := os.Remove(a.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.unwritable(err)
	}
	return nil
}

// ReplyFile is an entry of replies/: a reply too large for its record, a
// text a command cut and kept whole (--max-chars), or the folder of a
// reply's files (<name>.files, Dir set; Size and Files count its files).
type ReplyFile struct {
	Path    string
	ModTime time.Time
	Size    int64
	Files   int
	Dir     bool
}

// ReplyFiles lists the entries of replies/.
func (s *Store) ReplyFiles() ([]ReplyFile, error) {
	entries, err := os.ReadDir(s.repliesDir())
	if err != nil {
		return nil, err
	}
	var out []ReplyFile
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(s.repliesDir(), e.Name())
		switch {
		case fi.Mode().IsRegular():
			out = append(out, ReplyFile{Path: path, ModTime: fi.ModTime(), Size: fi.Size(), Files: 1})
		case fi.IsDir() && strings.HasSuffix(e.Name(), ".files"):
			size, n := dirSize(path)
			out = append(out, ReplyFile{Path: path, ModTime: fi.ModTime(), Size: size, Files: n, Dir: true})
		}
	}
	return out, nil
}

// dirSize sums and counts the regular files directly in dir (a reply's
// files folder has no subfolders).
func dirSize(dir string) (size int64, files int) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
			files++
		}
	}
	return size, files
}

// ReplyPath is the file WriteReply writes for id.
func (s *Store) ReplyPath(id string) string { return filepath.Join(s.repliesDir(), id+".txt") }

// RemoveReplyFile deletes an entry of replies/ (and nothing elsewhere): a
// file, or a reply's files folder with what it holds.
func (s *Store) RemoveReplyFile(path string) error {
	if filepath.Dir(path) != s.repliesDir() {
		return fmt.Errorf("%s is not in %s", path, s.repliesDir())
	}
	remove := os.Remove
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() && strings.HasSuffix(path, ".files") {
		remove = os.RemoveAll
	}
	if err := remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.unwritable(err)
	}
	return nil
}
