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
	return syncDir(h.s.tasksDir())
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
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := decodeRecord(s.recordPath(base[:i]), b)
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = path // the archived file, not the live record's name
		}
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

// ReplyFile is a file of replies/: a reply too large for its record, or a
// text a command cut and kept whole (--max-chars).
type ReplyFile struct {
	Path    string
	ModTime time.Time
	Size    int64
}

// ReplyFiles lists the files of replies/.
func (s *Store) ReplyFiles() ([]ReplyFile, error) {
	entries, err := os.ReadDir(s.repliesDir())
	if err != nil {
		return nil, err
	}
	var out []ReplyFile
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, ReplyFile{Path: filepath.Join(s.repliesDir(), e.Name()), ModTime: fi.ModTime(), Size: fi.Size()})
	}
	return out, nil
}

// ReplyPath is the file WriteReply writes for id.
func (s *Store) ReplyPath(id string) string { return filepath.Join(s.repliesDir(), id+".txt") }

// RemoveReplyFile deletes a file of replies/ (and nothing elsewhere).
func (s *Store) RemoveReplyFile(path string) error {
	if filepath.Dir(path) != s.repliesDir() {
		return fmt.Errorf("%s is not in %s", path, s.repliesDir())
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.unwritable(err)
	}
	return nil
}
