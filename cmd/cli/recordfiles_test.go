package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
)

// TestRecordFilesThatAreNotRecords: a FIFO named <uuid>.json in
// $STATE/tasks (which hung tasks and prune, deaf to SIGTERM) and a link to
// /dev/zero (read until memory ran out) are refused at once, as damaged
// records naming the file, by tasks, prune and result, each its own
// process; the real record beside them stays usable.
func TestRecordFilesThatAreNotRecords(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	r := p.run("send", "elastic-ai-agent", "hello", "--json")
	r.expect(t, ExitOK)
	good := decodeTask(t, r.stdout).ContextID
	tasks := filepath.Join(p.env["A2A_COURIER_STATE_DIR"], "tasks")
	const fifoID, zeroID = "0f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d", "1f8c3a52-2b7e-4f7d-9a1c-5e6f7a8b9c0d"
	if err := fifotest.Make(filepath.Join(tasks, fifoID+".json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(tasks, zeroID+".json")); err != nil {
		t.Fatal(err)
	}
	const deadline = 30 * time.Second // a hang, not a speed, is what fails
	r = p.runWithin(deadline, "tasks")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, good) || !strings.Contains(r.stderr, "2 task records unreadable") || !strings.Contains(r.stderr, "not a regular file") {
		t.Errorf("tasks: stdout %q\nstderr %q", r.stdout, r.stderr)
	}
	r = p.runWithin(deadline, "prune", "--older-than", "30d", "--dry-run")
	r.expect(t, ExitOK)
	r = p.runWithin(deadline, "prune", "--older-than", "1m")
	r.expect(t, ExitOK)
	for id, kind := range map[string]string{fifoID: "a named pipe (FIFO)", zeroID: "a symbolic link"} {
		r = p.runWithin(deadline, "result", id)
		r.expect(t, ExitUnexpected)
		path := filepath.Join(tasks, id+".json")
		if want := "a2a-courier: task record " + path + " is damaged: it is " + kind + ", not a regular file\n"; !strings.HasPrefix(r.stderr, want) {
			t.Errorf("result %s: %q, want %q", id, r.stderr, want)
		}
	}
	r = p.runWithin(deadline, "result", good, "--json")
	r.expect(t, ExitOK)
	if *decodeTask(t, r.stdout).Reply != "Echo: hello" {
		t.Errorf("the good record: %s", r.stdout)
	}
}

// TestEditedReplyFileIsRefused: a record whose reply_file was edited to
// name /etc/passwd made result print it, and tasks its first line; now
// the record is refused, saying it names a file outside the state
// directory, and neither prints a byte of it.
func TestEditedReplyFileIsRefused(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	r := p.run("send", "elastic-ai-agent", "hello", "--json")
	r.expect(t, ExitOK)
	id := decodeTask(t, r.stdout).ContextID
	path := filepath.Join(p.env["A2A_COURIER_STATE_DIR"], "tasks", id+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	json.Unmarshal(b, &rec)
	delete(rec, "reply")
	rec["reply_file"], rec["reply_bytes"] = "/etc/passwd", 100
	b, _ = json.Marshal(rec)
	writePrivate(path, b)
	passwd, _ := os.ReadFile("/etc/passwd")
	firstLine, _, _ := strings.Cut(string(passwd), "\n")
	for _, args := range [][]string{{"result", id}, {"result", id, "--json"}, {"tasks"}, {"tasks", "--json"}} {
		r = p.runWithin(30*time.Second, args...)
		if firstLine != "" && strings.Contains(r.stdout+r.stderr, firstLine[:min(len(firstLine), 8)]) {
			t.Errorf("%v printed /etc/passwd: %q", args, r.stdout)
		}
		if !strings.Contains(r.stdout+r.stderr, "names a reply file outside the state directory") {
			t.Errorf("%v: stdout %q\nstderr %q", args, r.stdout, r.stderr)
		}
	}
	if r := p.runWithin(30*time.Second, "result", id); r.code != ExitUnexpected || strings.Count(r.stderr, "\n") != 2 {
		t.Errorf("result: exit %d, stderr %q (want the error and its hint)", r.code, r.stderr)
	}
}
