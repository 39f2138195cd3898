package boundedfile

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// symlink makes a symbolic link, or says why none can be made here: Wine
// 8's CreateSymbolicLinkW returns success and makes nothing; Windows
// needs Developer Mode or an administrator.
func symlink(target, link string) string {
	err := os.Symlink(target, link)
	if fi, lerr := os.Lstat(link); err == nil && lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return ""
	}
	return fmt.Sprintf("no symbolic link can be made here (%v): Wine 8's CreateSymbolicLinkW makes none; Windows needs Developer Mode or an administrator", err)
}

// zeroDevice is a character device that reads without end: /dev/zero, and
// on Windows NUL (which Go's os.Stat calls a character device).
func zeroDevice() string {
	if runtime.GOOS == "windows" {
		return "NUL"
	}
	return "/dev/zero"
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("hello"), 0o600)
	link := filepath.Join(dir, "link")
	noLink := symlink(regular, link)
	fifo := filepath.Join(dir, "fifo")
	noFIFO := ""
	if err := fifotest.Make(fifo); err != nil {
		noFIFO = err.Error()
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	noFIFOLink := cmp.Or(noFIFO, symlink(fifo, fifoLink))
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", 11)), 0o600)
	for _, c := range []struct {
		name, path string
		want       string // "" for success, else the error's text
		skip       string // why this system cannot make the case
	}{
		{"regular", regular, "", ""},
		{"symlink to a regular file", link, "", noLink},
		{"exactly the cap", filepath.Join(dir, "regular"), "", ""},
		{"FIFO", fifo, fifo + " is a named pipe (FIFO), not a regular file", noFIFO},
		{"symlink to a FIFO", fifoLink, fifoLink + " is a named pipe (FIFO), not a regular file", noFIFOLink},
		{"character device", zeroDevice(), zeroDevice() + " is a character device, not a regular file", ""},
		{"directory", dir, dir + " is a directory, not a regular file", ""},
		{"over the cap", big, big + " is 11 bytes, over the 10 bytes limit", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			done := make(chan struct{})
			var b []byte
			var err error
			go func() { defer close(done); b, _, err = Read(c.path, 10) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Read blocked")
			}
			if c.want == "" {
				if err != nil || string(b) != "hello" {
					t.Fatalf("%q %v", b, err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("err %v, want %s", err, c.want)
			}
		})
	}
	if _, _, err := Read(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB",
		1 << 20: "1 MiB", 23800 << 20: "23.2 GiB", 64 << 10: "64 KiB"} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}

// ReadNoLink reads a regular file as Read does, and refuses a symbolic
// link, to a regular file or anything else, without following it.
func TestReadNoLink(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("hello"), 0o600)
	if b, _, err := ReadNoLink(regular, 10); err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
	for _, target := range []string{regular, zeroDevice()} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if why := symlink(target, link); why != "" {
			t.Skip(why)
		}
		var ne *NotRegularError
		if _, _, err := ReadNoLink(link, 10); !errors.As(err, &ne) || err.Error() != link+" is a symbolic link, not a regular file" {
			t.Errorf("link to %s: %v", target, err)
		}
	}
}

// TestReadNoLinkDuringRenames reads a file that another goroutine keeps
// replacing by rename, as the store replaces a record while a listing reads
// it: every read is of one version or the next, never refused as a link
// (the look and the open may see two versions).
func TestReadNoLinkDuringRenames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	if err := os.WriteFile(path, []byte("v0"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-done:
				writerDone <- nil
				return
			default:
			}
			tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d", i))
			if err := os.WriteFile(tmp, []byte(fmt.Sprintf("v%d", i)), 0o600); err != nil {
				writerDone <- err
				return
			}
			// The store's rename: on Windows it waits out an instant
			// when a reader has the file open (Wine refuses a rename
			// over an open file, shared for deletion or not).
			if err := ownfile.Rename(tmp, path); err != nil {
				writerDone <- err
				return
			}
		}
	}()
	for i := 0; i < 3000; i++ {
		b, _, err := ReadNoLink(path, 64)
		if err != nil {
			close(done)
			t.Fatalf("read %d: %v", i, err)
		}
		if len(b) < 2 || b[0] != 'v' {
			close(done)
			t.Fatalf("read %d: %q is no version of the file", i, b)
		}
	}
	close(done)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}
