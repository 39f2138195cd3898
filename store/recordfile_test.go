package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
)

// within5s runs fn and fails the test when it has not returned within a
// deadline: a read that blocks (a FIFO) would block for ever.
func within5s(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// TestRecordFilesThatAreNotRecords: what sits in tasks/ under a record's
// name but is not a regular file the store wrote (a FIFO, a link to
// /dev/zero or to a record elsewhere, a directory, a file over
// MaxRecordBytes) is refused at once as a damaged record naming the file,
// never read; the other records stay readable, and Archived and the
// cancel marker read likewise.
func TestRecordFilesThatAreNotRecords(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	if err := s.Create(newRecord("good")); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "link-to-record.json")
	b, _ := os.ReadFile(s.recordPath("good"))
	os.WriteFile(elsewhere, []byte(strings.Replace(string(b), `"good"`, `"link-to-record"`, 1)), 0o600)
	if err := fifotest.Make(s.recordPath("fifo")); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", s.recordPath("zero"))
	os.Symlink(elsewhere, s.recordPath("link-to-record"))
	os.Mkdir(s.recordPath("dir"), 0o700)
	big, _ := os.Create(s.recordPath("big"))
	big.Truncate(MaxRecordBytes + 1) // sparse: nothing is written
	big.Close()
	want := map[string]string{
		"fifo":           "is a named pipe (FIFO), not a regular file",
		"zero":           "is a symbolic link, not a regular file",
		"link-to-record": "is a symbolic link, not a regular file",
		"dir":            "is a directory, not a regular file",
		"big":            "is over the 64 MiB a record may have",
	}
	for id, text := range want {
		within5s(t, "Load "+id, func() {
			_, err := s.Load(id)
			checkCorrupt(t, err, s.recordPath(id))
			if !strings.Contains(err.Error(), text) {
				t.Errorf("%s: %v, want %q", id, err, text)
			}
		})
	}
	within5s(t, "List", func() {
		recs, errs := s.List()
		if len(recs) != 1 || recs[0].ContextID != "good" || len(errs) != len(want) {
			t.Errorf("List: %d records, errors %v", len(recs), errs)
		}
	})
	// An archived record and a cancel marker are read the same way.
	archive := filepath.Join(s.tasksDir(), "archive")
	os.MkdirAll(archive, 0o700)
	fifotest.Make(filepath.Join(archive, "good.1.json"))
	os.Symlink("/dev/zero", filepath.Join(archive, "good.2.json"))
	fifotest.Make(s.cancelPath("good"))
	within5s(t, "Archived, ListArchived, CancelRequested", func() {
		if recs := s.Archived("good"); len(recs) != 0 {
			t.Errorf("Archived: %v", recs)
		}
		if recs, errs := s.ListArchived(); len(recs) != 0 || len(errs) != 2 {
			t.Errorf("ListArchived: %v %v", recs, errs)
		}
		if s.CancelRequested("good", "m") {
			t.Error("a FIFO read as a cancel marker")
		}
	})
}

// TestRecordsNameTheirReplyFilesInside: a record whose reply_file (or a
// reply part's path) is not where the store writes them is refused as
// damaged, saying it names a file outside the state directory: result
// would print whatever file an edited record named. What the store writes
// (replies/<name>.txt, files in replies/<name>.files/ or out_dir), and the
// same directory reached through a link, loads.
func TestRecordsNameTheirReplyFilesInside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := Open(filepath.Join(dir, "state"))
	os.Symlink(filepath.Join(dir, "state"), filepath.Join(dir, "via-link"))
	out := t.TempDir()
	replies := s.repliesDir()
	for _, c := range []struct {
		name      string
		replyFile string
		partPath  string
		outDir    string
		refused   string
	}{
		{"reply file in replies/", filepath.Join(replies, "x.txt"), "", "", ""},
		{"replies/ through a link to the state directory", filepath.Join(dir, "via-link", "replies", "x.txt"), "", "", ""},
		{"a part in replies/<name>.files/", "", filepath.Join(replies, "x.files", "a.pdf"), "", ""},
		{"a part in out_dir", "", filepath.Join(out, "a.pdf"), out, ""},
		{"/etc/passwd", "/etc/passwd", "", "", `names a reply file outside the state directory ("/etc/passwd"`},
		{"dot-dot out of replies/", filepath.Join(replies, "..", "..", "secret.txt"), "", "", "outside the state directory"},
		{"unclean dot-dot", replies + "/../tasks/good.json", "", "", "outside the state directory"},
		{"a subdirectory of replies/", filepath.Join(replies, "x.files", "a.txt"), "", "", "outside the state directory"},
		{"relative", "replies/x.txt", "", "", "outside the state directory"},
		{"a part elsewhere", "", "/etc/shadow", "", `names a reply's file outside the state directory and the record's out_dir ("/etc/shadow")`},
		{"a part beside out_dir", "", out + "-other/a.pdf", out, "outside the state directory"},
	} {
		r := newRecord("r")
		r.State, r.ReplyFile = Completed, c.replyFile
		if c.partPath != "" {
			r.ReplyParts = []ReplyPart{{Source: "message", Kind: "file", Name: "a", Path: c.partPath}}
		}
		r.OutDir = c.outDir
		r.Version = RecordVersion
		b, _ := encodeRecord(r)
		os.WriteFile(s.recordPath("r"), b, 0o600)
		_, err := s.Load("r")
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.refused != "":
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), s.recordPath("r")) {
				t.Errorf("%s: %v, want a damaged record: %s", c.name, err, c.refused)
			}
		}
	}
}

// OpenReply opens a regular file, never a link, a FIFO or a device.
func TestOpenReplyOpensOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "r.txt")
	os.WriteFile(regular, []byte("reply"), 0o600)
	fifo := filepath.Join(dir, "f.txt")
	fifotest.Make(fifo)
	zero := filepath.Join(dir, "z.txt")
	os.Symlink("/dev/zero", zero)
	f, err := OpenReply(regular)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{fifo, zero} {
		within5s(t, "OpenReply "+p, func() {
			if f, err := OpenReply(p); err == nil {
				f.Close()
				t.Errorf("%s opened", p)
			}
		})
	}
}

// The store writes no record it would not read back.
func TestNoRecordIsWrittenOverTheCap(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	r := newRecord("huge")
	r.Message = strings.Repeat("\x01", MaxRecordBytes/6+1) // each is \u0001 in JSON
	err := s.Create(r)
	if err == nil || !strings.Contains(err.Error(), "over the 64 MiB a record may have") {
		t.Fatalf("Create: %v", err)
	}
	if _, err := os.Lstat(s.recordPath("huge")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a record was written: %v", err)
	}
}
