package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	if err := syscall.Mkfifo(s.recordPath("fifo"), 0o600); err != nil {
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
	syscall.Mkfifo(filepath.Join(archive, "good.1.json"), 0o600)
	os.Symlink("/dev/zero", filepath.Join(archive, "good.2.json"))
	syscall.Mkfifo(s.cancelPath("good"), 0o600)
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
	syscall.Mkfifo(fifo, 0o600)
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

// TestSpoolsThatAreNotSpools: a message's spool that is not a regular
// file the store wrote (a FIFO, which would block the worker for ever, a
// link to /dev/zero, which has no end, a link to a spool elsewhere, a
// directory) or is over the cap its reader gives is refused at once,
// never read; one within the cap reads back, and a missing one is
// fs.ErrNotExist.
func TestSpoolsThatAreNotSpools(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	const max = 1 << 20
	if err := s.WriteSpool("good", "m", []byte(`[{"kind":"data","data":"e30="}]`)); err != nil {
		t.Fatal(err)
	}
	path := func(id string) string { name, _ := s.spoolName(id, "m"); return filepath.Join(s.spoolDir(), name) }
	if err := syscall.Mkfifo(path("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", path("zero"))
	os.Symlink(path("good"), path("link"))
	os.Mkdir(path("dir"), 0o700)
	big, _ := os.Create(path("big"))
	big.Truncate(max + 1) // sparse: nothing is written
	big.Close()
	for id, text := range map[string]string{
		"fifo": "the spool is a named pipe (FIFO), not a regular file",
		"zero": "the spool is a symbolic link, not a regular file",
		"link": "the spool is a symbolic link, not a regular file",
		"dir":  "the spool is a directory, not a regular file",
		"big":  "the spool is over the 1 MiB its parts can take",
	} {
		within5s(t, "ReadSpool "+id, func() {
			if b, err := s.ReadSpool(id, "m", max); err == nil || err.Error() != text || b != nil {
				t.Errorf("%s: %d bytes, %v; want %q", id, len(b), err, text)
			}
		})
	}
	if b, err := s.ReadSpool("good", "m", max); err != nil || string(b) != `[{"kind":"data","data":"e30="}]` {
		t.Errorf("good: %q %v", b, err)
	}
	if _, err := s.ReadSpool("none", "m", max); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("none: %v", err)
	}
}
