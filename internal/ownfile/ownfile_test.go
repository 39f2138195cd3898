package ownfile_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

// TestMain lets a test run this binary as a reader of a file that another
// process keeps replacing (readerMain).
func TestMain(m *testing.M) {
	if path := os.Getenv("OWNFILE_TEST_READ"); path != "" {
		readerMain(path)
		return
	}
	os.Exit(m.Run())
}

// version is the content of the i-th version of a file: 4 KiB of one
// repeated line, so that a read of a part, or of two versions mixed,
// shows.
func version(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("version %08d\n", i)), 4096/17)
}

// wholeVersion reports whether b is one version, whole.
func wholeVersion(b []byte) bool {
	if len(b) != len(version(0)) {
		return false
	}
	return bytes.Equal(b, bytes.Repeat(b[:17], len(b)/17))
}

// readerMain reads path over and over until path+".stop" exists, then
// prints how many reads it made and each failure (an error, or a read
// that is not one whole version).
func readerMain(path string) {
	reads := 0
	var failures []string
	for {
		if _, err := os.Stat(path + ".stop"); err == nil {
			break
		}
		b, err := ownfile.ReadFile(path)
		pauseUnderWine()
		switch {
		case err != nil:
			failures = append(failures, err.Error())
		case !wholeVersion(b):
			failures = append(failures, fmt.Sprintf("a read of %d bytes that is no whole version", len(b)))
		}
		if reads++; reads == 1 {
			fmt.Println("reading")
		}
	}
	fmt.Println("reads", reads)
	for _, f := range failures {
		fmt.Println("failure", f)
	}
	os.Exit(0)
}

// pauseUnderWine pauses a reader between reads under Wine, as result
// --wait does between its looks: Wine refuses a rename over a file while
// any handle has it open, FILE_SHARE_DELETE or not (docs/windows.md), so
// readers that never pause would keep the writer out for ever there.
// Windows' POSIX rename replaces a file its readers have open, and Unix's
// rename always does: there they read without a pause.
func pauseUnderWine() {
	if ownfile.UnderWine() {
		time.Sleep(10 * time.Millisecond)
	}
}

// replace writes version i beside path and renames it over path, as the
// store writes a record.
func replace(t *testing.T, path string, i int) {
	t.Helper()
	f, err := ownfile.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(version(i)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ownfile.Rename(f.Name(), path); err != nil {
		t.Fatalf("replace with version %d: %v", i, err)
	}
}

// A file replaced by Rename while goroutines and other processes read it
// in a loop: no read fails (on Windows: no sharing violation, the readers
// opening with FILE_SHARE_DELETE and the rename waiting out an instant's
// refusal) and every read is one whole version; no rename fails.
func TestRenameWhileOthersRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	replace(t, path, 0)

	const processes = 6
	var children []*exec.Cmd
	var outs []*bufio.Scanner
	for i := 0; i < processes; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "OWNFILE_TEST_READ="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "reading" {
			t.Fatalf("reader %d: %q %v", i, sc.Text(), sc.Err())
		}
		children, outs = append(children, cmd), append(outs, sc)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	goroutineReads := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, err := ownfile.ReadFile(path)
				pauseUnderWine()
				mu.Lock()
				goroutineReads++
				if err != nil || !wholeVersion(b) {
					failures = append(failures, fmt.Sprintf("%d bytes, %v", len(b), err))
				}
				mu.Unlock()
			}
		}()
	}
	const versions = 300
	for i := 1; i <= versions; i++ {
		replace(t, path, i)
	}
	close(stop)
	wg.Wait()
	if err := os.WriteFile(path+".stop", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, sc := range outs {
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		children[i].Wait()
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "reads ") || lines[0] == "reads 0" {
			t.Errorf("reader process %d: %q", i, lines)
		}
		for _, l := range lines[1:] {
			t.Errorf("reader process %d: %s", i, l)
		}
	}
	for _, f := range failures {
		t.Errorf("reader goroutine: %s", f)
	}
	if goroutineReads == 0 {
		t.Error("the goroutines read nothing")
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, version(versions)) {
		t.Errorf("the last version is not there: %v", err)
	}
}

// Of writers racing to give a complete file the same new name, exactly one
// does; the others are told the name is taken, and the file is the
// winner's.
func TestPlaceNewIsExclusive(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "new.json")
	const writers = 12
	var wg sync.WaitGroup
	results := make([]error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := ownfile.CreateTemp(dir, ".new-*")
			if err != nil {
				results[i] = err
				return
			}
			f.Write(version(i))
			f.Close()
			defer os.Remove(f.Name())
			results[i] = ownfile.PlaceNew(f.Name(), target)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both placed the file", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("writer %d: %v, want an error wrapping fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer placed the file")
	}
	if b, err := os.ReadFile(target); err != nil || !bytes.Equal(b, version(winner)) {
		t.Errorf("the file is not the winner's: %v", err)
	}
}

// What the package creates is private: directories (and the parents it
// makes), files, temporary files; and a file created in a directory made
// by MkdirAll is private however it is created (it inherits the
// directory's ACL on Windows).
func TestWhatItCreatesIsPrivate(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "c")
	if err := ownfile.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), dir} {
		if p := ownfiletest.DirProblem(d); p != "" {
			t.Errorf("directory: %s", p)
		}
	}
	if err := ownfile.MkdirAll(dir); err != nil {
		t.Errorf("MkdirAll of a directory that is there: %v", err)
	}
	f, err := ownfile.OpenFile(filepath.Join(dir, "created"), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	tmp, err := ownfile.CreateTemp(dir, ".x-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	if !strings.HasPrefix(filepath.Base(tmp.Name()), ".x-") || !strings.HasSuffix(tmp.Name(), ".tmp") {
		t.Errorf("temporary file %s", tmp.Name())
	}
	for _, p := range []string{f.Name(), tmp.Name()} {
		if problem := ownfiletest.FileProblem(p); problem != "" {
			t.Errorf("file: %s", problem)
		}
	}
	if _, err := ownfile.OpenFile(f.Name(), os.O_WRONLY|os.O_CREATE|os.O_EXCL); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL over a file that is there: %v", err)
	}
	if err := ownfile.MkdirAll(filepath.Join(f.Name(), "sub")); err == nil {
		t.Error("MkdirAll under a file succeeded")
	}
}

// EnsureDir makes a directory that others can get at private, and says so
// before (the check sees it) and after.
func TestEnsureDirMakesADirectoryPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ownfiletest.Expose(dir); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if a := ownfile.Dir(dir, fi); !a.Open || a.Detail == "" || !strings.Contains(a.Hint, dir) {
		t.Fatalf("an exposed directory: %+v", a)
	}
	if err := ownfile.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	if p := ownfiletest.DirProblem(dir); p != "" {
		t.Error(p)
	}
	missing := filepath.Join(dir, "new", "deeper")
	if err := ownfile.EnsureDir(missing); err != nil {
		t.Fatal(err)
	}
	if p := ownfiletest.DirProblem(missing); p != "" {
		t.Error(p)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if err := ownfile.EnsureDir(file); err == nil {
		t.Errorf("EnsureDir of a file: %v", err)
	}
}

// The check says a file is open once others can read it, and private once
// they cannot, with a hint that names the file.
func TestFileCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	f, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("secret")
	f.Close()
	fi, _ := os.Stat(path)
	if a := ownfile.File(path, fi); a.Open {
		t.Errorf("a new file: %+v", a)
	}
	if err := ownfiletest.Expose(path); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	a := ownfile.File(path, fi)
	if !a.Open || !strings.Contains(a.Hint, path) || strings.Contains(a.Detail+a.Hint, "secret") {
		t.Errorf("an exposed file: %+v", a)
	}
	if err := ownfiletest.Protect(path); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	if a := ownfile.File(path, fi); a.Open {
		t.Errorf("a protected file: %+v", a)
	}
}

// Paths over Windows' MAX_PATH (260) work: a record's temporary file in a
// deep profile can be that long.
func TestLongPaths(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 300 {
		dir = filepath.Join(dir, strings.Repeat("d", 60))
	}
	if err := ownfile.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("r", 200) + ".json"
	f, err := ownfile.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(version(1))
	f.Close()
	path := filepath.Join(dir, name)
	if err := ownfile.PlaceNew(f.Name(), path); err != nil {
		t.Fatal(err)
	}
	os.Remove(f.Name())
	replace(t, path, 2)
	if b, err := ownfile.ReadFile(path); err != nil || !bytes.Equal(b, version(2)) {
		t.Fatalf("read back: %v", err)
	}
}

// Two handles that append write after each other, never over each other
// (as the audit log's writers do).
func TestAppendsDoNotOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 10; i++ {
		fmt.Fprintf(a, "a%d\n", i)
		fmt.Fprintf(b, "b%d\n", i)
	}
	got, _ := os.ReadFile(path)
	var want strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&want, "a%d\nb%d\n", i, i)
	}
	if string(got) != want.String() {
		t.Errorf("%q", got)
	}
	// O_TRUNC empties a file that is there.
	c, err := ownfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("O_TRUNC left %d bytes", fi.Size())
	}
}
