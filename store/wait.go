package store

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A wait marker, tasks/<contextId>.wait, says that a caller waits on a
// task (`result --wait`, an MCP wait) until the time it holds: the worker
// that follows the task then looks at it every few seconds instead of
// every poll interval. A waiter that is killed leaves a marker that
// expires by itself; one that waits long writes it again before it does.
// It is a hint for the worker's pace, never a state: it is not synced to
// disk, and losing it costs only a slower look.

func (s *Store) waitPath(id string) string { return filepath.Join(s.tasksDir(), id+".wait") }

// MarkWaiting writes a task's wait marker, valid until until.
func MarkWaiting(s *Store, id string, until time.Time) error {
	if err := CheckContextID(id); err != nil {
		return err
	}
	tmp := filepath.Join(s.tasksDir(), "."+id+".wait.tmp-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(until.UnixNano(), 10)), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.waitPath(id)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ClearWaiting removes a task's wait marker.
func ClearWaiting(s *Store, id string) {
	if CheckContextID(id) == nil {
		os.Remove(s.waitPath(id))
	}
}

// maxWaitMarker bounds what is read of a wait marker.
const maxWaitMarker = 64

// Waited reports whether a caller said it waits on a task at now: its
// marker is there and has not expired.
func Waited(s *Store, id string, now time.Time) bool {
	if CheckContextID(id) != nil {
		return false
	}
	b, err := readOwnFile(s.waitPath(id), maxWaitMarker)
	if err != nil {
		return false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && now.Before(time.Unix(0, n))
}
