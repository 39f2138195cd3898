package store

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

// TestMain lets a test re-run this binary as a child that takes a lock and
// waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("STORE_TEST_HOLD_LOCK"); dir != "" {
		s, err := Open(dir)
		if err != nil {
			os.Exit(3)
		}
		if _, err := s.Lock("held"); err != nil {
			os.Exit(4)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if dir := os.Getenv("STORE_TEST_READ_RECORD"); dir != "" {
		readRecordUntilStopped(dir)
	}
	os.Exit(m.Run())
}

// readRecordUntilStopped loads the record "shared" of the state directory
// dir over and over, as result --wait does, until dir/stop exists; then
// prints how many loads it made and each that failed.
func readRecordUntilStopped(dir string) {
	s, err := Open(dir)
	if err != nil {
		fmt.Println("failure", err)
		os.Exit(0)
	}
	loads := 0
	var failures []string
	for {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			break
		}
		if r, err := s.Load("shared"); err != nil {
			failures = append(failures, err.Error())
		} else if r.Progress == nil || !strings.HasPrefix(r.Progress.Text, "step ") {
			failures = append(failures, fmt.Sprintf("a record without its progress: %+v", r.Progress))
		}
		if loads++; loads == 1 {
			fmt.Println("reading")
		}
		if ownfile.UnderWine() {
			// Wine refuses a rename over a file while any handle has it
			// open (docs/windows.md): a reader that never paused would
			// keep the writer out there. result --wait pauses between
			// its looks (a second, or a change of the directory); on
			// Windows and Unix this one does not.
			time.Sleep(20 * time.Millisecond)
		}
	}
	fmt.Println("loads", loads)
	for _, f := range failures {
		fmt.Println("failure", f)
	}
	os.Exit(0)
}

// newRecord is a record as a send creates it: queued, with its text, the
// text's hash and size (internal/courier's submit), which stay after the
// text is gone.
func newRecord(id string) *Record {
	sum := sha256.Sum256([]byte("hello"))
	return &Record{ContextID: id, MessageID: "m", Agent: "a", State: Queued, Message: "hello",
		MessageSHA256: hex.EncodeToString(sum[:]), MessageSize: len("hello"),
		Target: Target{Kind: "kibana", URL: "https://kb"}, Identity: "0123456789abcdef", MaxWait: Duration(time.Hour)}
}

func TestOpenMakesAPrivateDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Open to others: 0755 on Unix, a DACL granting Everyone on Windows.
	if err := ownfiletest.Expose(dir); err != nil {
		t.Fatal(err)
	}
	if ownfiletest.DirProblem(dir) == "" {
		t.Fatal("the directory is private before Open")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// 0700 on Unix; on Windows a DACL, read back, that grants no one but
	// the user, SYSTEM and Administrators.
	for _, d := range []string{dir, s.tasksDir(), s.workersDir(), s.logsDir(), s.repliesDir()} {
		if p := ownfiletest.DirProblem(d); p != "" {
			t.Errorf("%s: %s", d, p)
		}
	}
}

func TestCreateLoadUpdate(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	r := newRecord("ctx-1")
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(newRecord("ctx-1")); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if p := ownfiletest.FileProblem(s.recordPath("ctx-1")); p != "" {
		t.Fatalf("record: %s", p)
	}
	h, err := s.Lock("ctx-1")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if _, err := h.Update(func(r *Record) error { r.State = Sending; return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := h.Update(func(r *Record) error {
		r.State = Completed
		r.Reply = "done"
		return nil
	})
	if err != nil || got.State != Completed || got.FinishedAt == nil {
		t.Fatal(got, err)
	}
	// A final record does not change state again.
	if _, err := h.Update(func(r *Record) error { r.State = Rejected; return nil }); !errors.Is(err, ErrIllegalMove) {
		t.Fatalf("completed → rejected: %v", err)
	}
	back, err := s.Load("ctx-1")
	if err != nil || back.Reply != "done" || back.State != Completed || back.Version != RecordVersion {
		t.Fatalf("%+v %v", back, err)
	}
	b, _ := os.ReadFile(s.recordPath("ctx-1"))
	if strings.Contains(string(b), "hello") {
		t.Error("the message text stayed in the record")
	}
	entries, _ := os.ReadDir(s.tasksDir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if _, err := s.Load("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func TestLocksAreExclusive(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	h, err := s.Lock("ctx-l")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lock("ctx-l"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	if !s.Locked("ctx-l") {
		t.Error("Locked = false while held")
	}
	h.Release()
	if s.Locked("ctx-l") {
		t.Error("Locked = true after release")
	}
	if _, err := h.Update(func(*Record) error { return nil }); err == nil {
		t.Error("Update after Release succeeded")
	}
	w, err := s.AcquireWorker("abcdef0123456789", WorkerTiming{Beat: time.Second, StaleAfter: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !s.WorkerRunning("abcdef0123456789") {
		t.Error("worker lock not seen")
	}
	w.Release()
	if s.WorkerRunning("abcdef0123456789") {
		t.Error("worker lock still seen")
	}
}

func TestLockIsFreedWhenItsProcessIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STORE_TEST_HOLD_LOCK="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked" {
		t.Fatalf("child: %q %v", buf, err)
	}
	s, _ := Open(dir)
	if !s.Locked("held") {
		t.Fatal("the child's lock is not seen")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if s.Locked("held") {
		t.Fatal("the lock survived its process")
	}
}

func TestDamagedRecordsAreNamedAndIsolated(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	for _, id := range []string{"good-1", "good-2"} {
		if err := s.Create(newRecord(id)); err != nil {
			t.Fatal(err)
		}
	}
	damaged := map[string]string{
		"half":      `{"version":1,"context_id":"half","state":"que`,
		"empty":     ``,
		"wrongname": `{"version":1,"context_id":"other","state":"queued"}`,
		"badstate":  `{"version":1,"context_id":"badstate","state":"weird"}`,
		"future":    `{"version":99,"context_id":"future","state":"queued"}`,
	}
	for id, body := range damaged {
		os.WriteFile(s.recordPath(id), []byte(body), 0o600)
	}
	recs, errs := s.List()
	if len(recs) != 2 {
		t.Errorf("readable records: %d", len(recs))
	}
	if len(errs) != len(damaged) {
		t.Errorf("errors: %v", errs)
	}
	for id := range damaged {
		_, err := s.Load(id)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), id+".json") {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func TestContextIDsCannotEscape(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	for _, id := range []string{"../x", "/etc/passwd", "a/b", "..", ".", "", "a\x00b", ".hidden", "a b", strings.Repeat("a", 300)} {
		if err := s.Create(newRecord(id)); err == nil {
			t.Errorf("created %q", id)
		}
		if _, err := s.Load(id); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("load %q: %v", id, err)
		}
		if _, err := s.Lock(id); err == nil {
			t.Errorf("locked %q", id)
		}
	}
}

func TestConcurrentCreatesOfTheSameID(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.Create(newRecord("race")) == nil {
				mu.Lock()
				created++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("%d creates succeeded, want 1", created)
	}
}

func TestArchive(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	if err := s.Create(newRecord("conv")); err != nil {
		t.Fatal(err)
	}
	h, err := s.Lock("conv")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if err := h.Archive(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("conv"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after archive: %v", err)
	}
	if err := s.Create(newRecord("conv")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(s.tasksDir(), "archive"))
	if len(entries) != 1 {
		t.Errorf("archive holds %d files", len(entries))
	}
	if recs, errs := s.List(); len(recs) != 1 || len(errs) != 0 {
		t.Errorf("list after archive: %d records, %v", len(recs), errs)
	}
}

func TestAuditIsBoundedAndMetadataOnly(t *testing.T) {
	t.Parallel()
	s, _ := Open(t.TempDir())
	big := AuditEntry{Command: "send", Agent: "a", ContextID: strings.Repeat("c", 200), MessageSize: 10, MessageSHA256: strings.Repeat("f", 64), State: "queued"}
	for i := 0; i < MaxLogBytes/300+100; i++ {
		if err := s.Audit(big); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(s.AuditPath())
	if err != nil || fi.Size() >= MaxLogBytes {
		t.Errorf("audit log: %v %v", fi, err)
	}
	if p := ownfiletest.FileProblem(s.AuditPath()); p != "" {
		t.Errorf("audit log: %s", p)
	}
	if _, err := os.Stat(s.AuditPath() + ".1"); err != nil {
		t.Errorf("no rotated generation: %v", err)
	}
	// Metadata only: these keys and no others can ever be written.
	b, _ := os.ReadFile(s.AuditPath())
	line := strings.SplitN(string(b), "\n", 2)[0]
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"time": true, "command": true, "agent": true, "context_id": true, "message_size": true,
		"message_sha256": true, "state": true, "duration_ms": true, "http_status": true, "error": true}
	for k := range m {
		if !allowed[k] {
			t.Errorf("audit field %q", k)
		}
	}
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sent := created.Add(time.Minute)
	r := &Record{CreatedAt: created, MaxWait: Duration(time.Hour)}
	if !r.Deadline().Equal(created.Add(time.Hour)) {
		t.Error(r.Deadline())
	}
	r.SentAt = &sent
	if !r.Deadline().Equal(sent.Add(time.Hour)) {
		t.Error(r.Deadline())
	}
}

// TestValidIDAgreesWithThePattern checks the written-out id check against
// the regular expression it replaces.
func TestValidIDAgreesWithThePattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9_~@+-][A-Za-z0-9._~:@+-]{0,199}$`)
	cases := []string{"", "a", ".", ":", "..", "a.b", ".a", ":a", "a:", "a/b", "a b", "a\n", "a\x00", "é", "a\u00e9",
		"3f6c2e1a-9b7d-4c1e-8f2a-0d5b6c7e8f90", "a2a-x", "~x", "@x", "+x", "-x", "_x", "x$", "x\\y",
		strings.Repeat("a", 200), strings.Repeat("a", 201), strings.Repeat("a", 255), strings.Repeat("a", 256), "." + strings.Repeat("a", 199)}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, id := range cases {
		if got, want := validID(id), re.MatchString(id); got != want {
			t.Errorf("validID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}

// A record its worker keeps updating while other processes load it in a
// loop (result --wait in many processes): no load fails, on Windows no
// sharing violation either (the readers open with FILE_SHARE_DELETE, the
// rename replaces with POSIX semantics and waits out a refusal), every
// load is a whole record, and no update fails.
func TestARecordReadByManyProcessesWhileUpdated(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	r := newRecord("shared")
	r.State = Sending
	if err := s.Create(r); err != nil {
		t.Fatal(err)
	}
	h, err := s.Lock("shared")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	progress := func(i int) {
		if _, err := h.Update(func(r *Record) error {
			r.State = Working
			r.Progress = &Progress{Text: fmt.Sprintf("step %d", i), At: time.Now()}
			return nil
		}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	progress(0)
	const processes = 12
	var readers []*exec.Cmd
	var outs []*bufio.Scanner
	for i := 0; i < processes; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "STORE_TEST_READ_RECORD="+dir)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "reading" {
			t.Fatalf("reader %d: %q", i, sc.Text())
		}
		readers, outs = append(readers, cmd), append(outs, sc)
	}
	for i := 1; i <= 100; i++ {
		progress(i)
	}
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
	for i, sc := range outs {
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		readers[i].Wait()
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "loads ") {
			t.Errorf("reader %d: %q", i, lines)
		}
		for _, l := range lines[1:] {
			t.Errorf("reader %d: %s", i, l)
		}
	}
	if got, err := s.Load("shared"); err != nil || got.Progress.Text != "step 100" {
		t.Errorf("the last update: %+v %v", got, err)
	}
}
