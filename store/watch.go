package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ChangeKind says what a Change is about.
type ChangeKind int

const (
	// RecordChanged: a context's record was written, created, or replaced
	// (a record is replaced by a rename over its file).
	RecordChanged ChangeKind = iota
	// RecordRemoved: a context's record file went (archived, pruned, or
	// renamed away); a new one may already be in its place.
	RecordRemoved
	// CancelAsked: a context's cancel marker was written (RequestCancel).
	CancelAsked
	// Missed: changes may have been lost (the system's queue overflowed,
	// or the tasks directory was gone and is watched again): look at every
	// record again. Err says why, when something failed.
	Missed
	// WaitChanged: a context's wait marker was written or removed
	// (MarkWaiting, ClearWaiting): a caller began or ended a wait.
	WaitChanged
)

// Change is one change of the tasks directory, in the store's terms.
type Change struct {
	Kind      ChangeKind
	ContextID string // "" for Missed
	Err       error
}

// rewatchEvery is how often Watch tries again to watch a tasks directory
// it cannot watch (gone, or not made yet).
const rewatchEvery = time.Second

// Watch reports the changes of s's records and cancel markers until ctx
// ends, when the channel is closed. It owns the names of the tasks
// directory: temporary files, locks and anything that does not name a
// contextId are never reported. A tasks directory that cannot be watched
// (removed under a running process) is tried again every second, and a
// Missed change says when it is watched again. Events are a hint, never
// the only way to learn of a change: callers look again on a timer too.
// The error is that of a system that gives no watcher at all (the channel
// is nil then).
func Watch(ctx context.Context, s *Store) (<-chan Change, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	// Watched before Watch returns: a change the caller makes or looks
	// for once it has the channel is never one made before the watch.
	dir := s.tasksDir()
	watched := add(w, dir)
	out := make(chan Change)
	go watch(ctx, dir, w, watched, out)
	return out, nil
}

// add watches dir and returns the directory it watches; nil when it
// cannot be watched.
func add(w *fsnotify.Watcher, dir string) os.FileInfo {
	fi, err := os.Stat(dir)
	if err != nil || w.Add(dir) != nil {
		return nil
	}
	os.SameFile(fi, fi) // the directory's identity read now (Windows reads it lazily, by its name)
	return fi
}

// watch delivers the changes. watched is the directory being watched: one
// removed and made again under the same name is another, which a watch of
// the first never reports (Windows says nothing of its removal), so every
// second the name is checked to still be it.
func watch(ctx context.Context, dir string, w *fsnotify.Watcher, watched os.FileInfo, out chan<- Change) {
	defer close(out)
	defer w.Close()
	retry := time.NewTicker(rewatchEvery)
	defer retry.Stop()
	send := func(c Change) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Clean(ev.Name) == dir && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
				// The directory itself went: its watch went with it.
				w.Remove(dir)
				watched = nil
				continue
			}
			if c, ok := changeOf(ev); ok && !send(c) {
				return
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if !send(Change{Kind: Missed, Err: err}) {
				return
			}
		case <-retry.C:
			if watched != nil {
				if fi, err := os.Stat(dir); err == nil && os.SameFile(fi, watched) {
					continue
				}
				// Gone, or another directory by now, without an event.
				w.Remove(dir)
				watched = nil
			}
			if watched = add(w, dir); watched != nil && !send(Change{Kind: Missed}) {
				return
			}
		}
	}
}

// changeOf reads an event of the tasks directory: "<id>.json" is a
// record, "<id>.cancel" a cancel marker, "<id>.wait" a wait marker; a name starting with '.' is a file
// being written (".<id>.json.tmp-…"), and locks are nobody's change.
func changeOf(ev fsnotify.Event) (Change, bool) {
	name := filepath.Base(ev.Name)
	gone := ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0
	wrote := ev.Op&(fsnotify.Create|fsnotify.Write) != 0
	if strings.HasPrefix(name, ".") {
		return Change{}, false
	}
	if id, ok := strings.CutSuffix(name, ".json"); ok && validID(id) {
		switch {
		case wrote:
			return Change{Kind: RecordChanged, ContextID: id}, true
		case gone:
			return Change{Kind: RecordRemoved, ContextID: id}, true
		}
		return Change{}, false
	}
	if id, ok := strings.CutSuffix(name, ".cancel"); ok && validID(id) && wrote {
		return Change{Kind: CancelAsked, ContextID: id}, true
	}
	if id, ok := strings.CutSuffix(name, ".wait"); ok && validID(id) && (wrote || gone) {
		return Change{Kind: WaitChanged, ContextID: id}, true
	}
	return Change{}, false
}

// RecordIDs returns the contextIds of the record files in s's tasks
// directory, as they are named (a file may be damaged, or gone by the time
// it is read).
func RecordIDs(s *Store) ([]string, error) {
	entries, err := os.ReadDir(s.tasksDir())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasPrefix(id, ".") && validID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// RecordModTime returns when s's record file of a context was last replaced,
// and false when there is none.
func RecordModTime(s *Store, id string) (time.Time, bool) {
	if CheckContextID(id) != nil {
		return time.Time{}, false
	}
	fi, err := os.Stat(s.recordPath(id))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}
