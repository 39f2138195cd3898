package courier

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/store"
)

// fillLog appends lines named for gen to the worker log until it is past
// the rotation size, as a long-lived worker's lines would, and returns how
// many it wrote.
func fillLog(t *testing.T, path, gen string) int {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := strings.Repeat("x", 1000)
	n := 0
	for written := 0; written <= store.MaxLogBytes; n++ {
		k, err := fmt.Fprintf(f, "%s %06d %s\n", gen, n, line)
		if err != nil {
			t.Fatal(err)
		}
		written += k
	}
	return n
}

// countLines counts the lines of the file that start with prefix.
func countLines(t *testing.T, path, prefix string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// The worker log rotates while a worker holds it open (its stdout and
// stderr): on Windows a file open without FILE_SHARE_DELETE cannot be
// renamed, so the log grew for as long as any worker lived. Each rotation
// keeps the lines written before it, in worker.log.1; a second rotation,
// while the worker still holds worker.log.1 open, replaces that one.
func TestWorkerLogRotatesWhileAWorkerHoldsIt(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(c.Store.LogPath())
			t.Logf("worker log (last KiB): %s", b[max(0, len(b)-1024):])
		}
	})
	// A worker with nothing to do, lingering: it holds the log as long.
	const ident = "0123456789abcdef"
	if err := c.spawn([]string{"worker", "--state-dir", c.Store.Dir(), "--identity", ident, "--linger", "2m"}, testKey); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(c.Store.Workers(ident)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	workers := c.Store.Workers(ident)
	if len(workers) != 1 {
		t.Fatalf("workers %v", workers)
	}
	path := c.Store.LogPath()

	// First rotation: another process (here, this one) opens the log, as a
	// spawner does, while the worker holds it.
	first := fillLog(t, path, "first")
	f, err := c.Store.OpenLog()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() >= store.MaxLogBytes {
		t.Fatalf("the log was not rotated while a worker held it: %v", err)
	}
	if n := countLines(t, path+".1", "first "); n != first {
		t.Fatalf("worker.log.1 has %d of the %d lines written before the rotation", n, first)
	}

	// Second rotation, while the worker still holds worker.log.1 open.
	second := fillLog(t, path, "second")
	if f, err = c.Store.OpenLog(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() >= store.MaxLogBytes {
		t.Fatalf("the log was not rotated while a worker held its previous generation: %v", err)
	}
	if n := countLines(t, path+".1", "second "); n != second {
		t.Fatalf("worker.log.1 has %d of the %d lines written before the second rotation", n, second)
	}
	if len(c.Store.Workers(ident)) != 1 {
		t.Fatal("the worker did not hold the log to the end")
	}
}
