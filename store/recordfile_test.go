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

// ifMade is "" when err is nil, else why the file was not made.
func ifMade(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

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
	os.Mkdir(s.recordPath("dir"), 0o700)
	big, _ := os.Create(s.recordPath("big"))
	big.Truncate(MaxRecordBytes + 1) // sparse: nothing is written
	big.Close()
	want := map[string]string{
		"dir": "is a directory, not a regular file",
		"big": "is over the 64 MiB a record may have",
	}
	// What this system can make (no FIFOs on Windows, no links under
	// Wine): each case left out is said.
	for id, c := range map[string]struct{ text, lacking string }{
		"fifo":           {"is a named pipe (FIFO), not a regular file", makeFIFO(s.recordPath("fifo"))},
		"zero":           {"is a symbolic link, not a regular file", makeSymlink(zeroDevice(), s.recordPath("zero"))},
		"link-to-record": {"is a symbolic link, not a regular file", makeSymlink(elsewhere, s.recordPath("link-to-record"))},
	} {
		if c.lacking != "" {
			t.Logf("%s: left out: %s", id, c.lacking)
			continue
		}
		want[id] = c.text
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
	made := 0
	for _, lacking := range []string{
		makeFIFO(filepath.Join(archive, "good.1.json")),
		makeSymlink(zeroDevice(), filepath.Join(archive, "good.2.json")),
		ifMade(os.Mkdir(filepath.Join(archive, "good.3.json"), 0o700)),
	} {
		if lacking == "" {
			made++
		} else {
			t.Logf("an archived record left out: %s", lacking)
		}
	}
	marker := makeFIFO(s.cancelPath("good"))
	if marker != "" {
		t.Logf("a cancel marker that is a FIFO left out: %s; a directory instead", marker)
		os.Mkdir(s.cancelPath("good"), 0o700)
	}
	within5s(t, "Archived, ListArchived, CancelRequested", func() {
		if recs := s.Archived("good"); len(recs) != 0 {
			t.Errorf("Archived: %v", recs)
		}
		if recs, errs := s.ListArchived(); len(recs) != 0 || len(errs) != made {
			t.Errorf("ListArchived: %v %v, want %d errors", recs, errs, made)
		}
		if s.CancelRequested("good", "m") {
			t.Error("a FIFO (or a directory) read as a cancel marker")
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
	noLink := makeSymlink(filepath.Join(dir, "state"), filepath.Join(dir, "via-link"))
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
		if strings.Contains(c.replyFile, "via-link") && noLink != "" {
			t.Logf("%s: left out: %s", c.name, noLink)
			continue
		}
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
	refused := []string{zeroDevice(), dir}
	fifo := filepath.Join(dir, "f.txt")
	if why := makeFIFO(fifo); why == "" {
		refused = append(refused, fifo)
	} else {
		t.Logf("a FIFO left out: %s", why)
	}
	zero := filepath.Join(dir, "z.txt")
	if why := makeSymlink(zeroDevice(), zero); why == "" {
		refused = append(refused, zero)
	} else {
		t.Logf("a link left out: %s", why)
	}
	f, err := OpenReply(regular)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range refused {
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
	if err := fifotest.Make(path("fifo")); err != nil {
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
