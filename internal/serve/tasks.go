package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client/wire"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/runner"
	"github.com/a2a-courier/a2a-courier/store"
)

// StoppedReason is the reason of a task that was running when the server
// stopped: it is never run again.
const StoppedReason = "the server stopped while it ran; it was not run again (send the message anew to run it)"

// record is a task as it is kept on disk, one file a task
// (<state>/tasks/<id>.json), replaced atomically at each change of state.
type record struct {
	ID        string    `json:"id"`
	ContextID string    `json:"contextId"`
	Caller    string    `json:"caller"`
	MessageID string    `json:"messageId"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	// Input is the message's text; the files it brought are not kept.
	Input string `json:"input,omitempty"`
	Files int    `json:"files,omitempty"`
	Reply string `json:"reply,omitempty"`
	// OutputBytes is the size of a reply too large to be Reply, kept in
	// its own file (<id>.out) and read when asked for, not held in memory.
	OutputBytes int  `json:"outputBytes,omitempty"`
	ExitCode    *int `json:"exitCode,omitempty"`
	// Pid, Pgid and RunDir are the running command's, written once it
	// started: a server killed mid-run ends that group and removes that
	// folder when it opens its state again.
	Pid    int    `json:"pid,omitempty"`
	Pgid   int    `json:"pgid,omitempty"`
	RunDir string `json:"runDir,omitempty"`
}

// task is a record and who watches it.
type task struct {
	rec record
	// status is the last status line (stderr) while it runs.
	status string
	subs   map[chan struct{}]bool
	// done is closed when the task reaches a terminal state.
	done   chan struct{}
	cancel func()
}

// table holds the tasks, in memory and on disk.
type table struct {
	dir string
	mu  sync.Mutex
	m   map[string]*task
	// byMessage finds a caller's task by the message that made it, so
	// that a message sent twice is run once.
	byMessage map[string]string
	// ctxOwner is the caller a contextId belongs to.
	ctxOwner map[string]string
}

func messageKey(caller, messageID string) string { return caller + "\x00" + messageID }

// openTable loads the tasks kept in dir. A task that was not finished
// when the server stopped is marked failed (StoppedReason) and written
// so, before the server answers anyone: it is never run again.
func openTable(dir string, now time.Time, keep time.Duration) (*table, int, error) {
	if err := ownfile.MkdirAll(dir); err != nil {
		return nil, 0, err
	}
	t := &table{dir: dir, m: map[string]*task{}, byMessage: map[string]string{}, ctxOwner: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	stopped := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, 0, err
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil || r.ID+".json" != name {
			return nil, 0, fmt.Errorf("the task record %s cannot be read (move it away to go on): %v", filepath.Join(dir, name), err)
		}
		if keep > 0 && wire.Terminal(r.State) && now.Sub(r.Updated) > keep {
			os.Remove(filepath.Join(dir, r.ID+".out"))
			os.Remove(filepath.Join(dir, name))
			continue
		}
		if !wire.Terminal(r.State) {
			reap(&r)
			r.end(wire.StateFailed, StoppedReason, now)
			if err := t.write(&r); err != nil {
				return nil, 0, err
			}
			stopped++
		}
		t.add(&task{rec: r, done: closedChan()})
	}
	return t, stopped, nil
}

// reap ends what is left of the run of a task the server was killed in
// (its process group, Unix; a job object died with the server, Windows)
// and removes the run's folder when it is one the runner makes.
func reap(r *record) {
	runner.KillGroup(r.Pgid)
	if r.RunDir != "" && filepath.IsAbs(r.RunDir) && strings.HasPrefix(filepath.Base(r.RunDir), runner.DirPrefix) {
		os.RemoveAll(r.RunDir)
	}
	r.Pid, r.Pgid, r.RunDir = 0, 0, ""
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (t *table) add(x *task) {
	x.subs = map[chan struct{}]bool{}
	t.m[x.rec.ID] = x
	t.byMessage[messageKey(x.rec.Caller, x.rec.MessageID)] = x.rec.ID
	t.ctxOwner[x.rec.ContextID] = x.rec.Caller
}

// write replaces the task's file atomically.
func (t *table) write(r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = store.WriteFileAtomic(t.dir, r.ID+".json", b)
	if store.InPlace(err) {
		return nil
	}
	return err
}

var errContextTaken = errors.New("the contextId belongs to another caller")

// create records a new task, working, before its command starts. It
// returns the existing task when the caller sent this message before.
func (t *table) create(r record) (x *task, existing bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.byMessage[messageKey(r.Caller, r.MessageID)]; ok && r.MessageID != "" {
		return t.m[id], true, nil
	}
	if owner, ok := t.ctxOwner[r.ContextID]; ok && owner != r.Caller {
		return nil, false, errContextTaken
	}
	if err := t.write(&r); err != nil {
		return nil, false, err
	}
	x = &task{rec: r, done: make(chan struct{})}
	t.add(x)
	return x, false, nil
}

// get returns a copy of the caller's task, false if there is none (another
// caller's task is none).
func (t *table) get(caller, id string) (snapshot, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x, ok := t.m[id]
	if !ok || x.rec.Caller != caller {
		return snapshot{}, false
	}
	return x.snap(), true
}

// snapshot is a task as read at one moment.
type snapshot struct {
	rec    record
	status string
	done   chan struct{}
}

func (x *task) snap() snapshot { return snapshot{rec: x.rec, status: x.status, done: x.done} }

// setStatus records a status line of a running task and tells watchers.
func (t *table) setStatus(id, line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.m[id]
	if x == nil || wire.Terminal(x.rec.State) {
		return
	}
	x.status = line
	x.notify()
}

func (x *task) notify() {
	for c := range x.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// finish records the task's end once: written, then told. A second
// finish (a cancel after the end) changes nothing.
func (t *table) finish(id string, fill func(*record)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.m[id]
	if x == nil || wire.Terminal(x.rec.State) {
		return nil
	}
	r := x.rec
	fill(&r)
	err := t.write(&r)
	x.rec = r
	x.status = ""
	close(x.done)
	x.notify()
	return err
}

// watch registers c to be told of the task's changes; the returned func
// ends it.
func (t *table) watch(id string, c chan struct{}) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.m[id]
	if x == nil {
		return func() {}
	}
	x.subs[c] = true
	return func() {
		t.mu.Lock()
		delete(x.subs, c)
		t.mu.Unlock()
	}
}

// started records the running command's process group and folder.
func (t *table) started(id string, st runner.Started) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.m[id]
	if x == nil || wire.Terminal(x.rec.State) {
		return nil
	}
	r := x.rec
	r.Pid, r.Pgid, r.RunDir = st.Pid, st.Pgid, st.Dir
	if err := t.write(&r); err != nil {
		return err
	}
	x.rec = r
	return nil
}

func (t *table) setCancel(id string, cancel func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x := t.m[id]; x != nil {
		x.cancel = cancel
	}
}

// cancelRun asks the caller's running task to stop; false when there is no
// such task, or it has finished.
func (t *table) cancelRun(caller, id string) (found, running bool) {
	t.mu.Lock()
	x, ok := t.m[id]
	if !ok || x.rec.Caller != caller {
		t.mu.Unlock()
		return false, false
	}
	if wire.Terminal(x.rec.State) || x.cancel == nil {
		t.mu.Unlock()
		return true, false
	}
	cancel := x.cancel
	t.mu.Unlock()
	cancel()
	return true, true
}

// list returns the caller's tasks of a context ("" any), newest first.
func (t *table) list(caller, contextID, state string) []snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []snapshot
	for _, x := range t.m {
		if x.rec.Caller != caller || (contextID != "" && x.rec.ContextID != contextID) || (state != "" && x.rec.State != state) {
			continue
		}
		out = append(out, x.snap())
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].rec.Created.Equal(out[j].rec.Created) {
			return out[i].rec.Created.After(out[j].rec.Created)
		}
		return out[i].rec.ID < out[j].rec.ID
	})
	return out
}

func (t *table) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// byMessageID finds the caller's task made by a message.
func (t *table) byMessageID(caller, messageID string) (snapshot, bool) {
	t.mu.Lock()
	id, ok := t.byMessage[messageKey(caller, messageID)]
	t.mu.Unlock()
	if !ok || messageID == "" {
		return snapshot{}, false
	}
	return t.get(caller, id)
}

// snapSafe reads x under the table's lock.
func (x *task) snapSafe(t *table) snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return x.snap()
}

// writeOutput keeps a large reply in its own file, before the record that
// names it.
func (t *table) writeOutput(id string, b []byte) error {
	err := store.WriteFileAtomic(t.dir, id+".out", b)
	if store.InPlace(err) {
		return nil
	}
	return err
}

func (t *table) output(id string) ([]byte, error) {
	return os.ReadFile(filepath.Join(t.dir, id+".out"))
}
