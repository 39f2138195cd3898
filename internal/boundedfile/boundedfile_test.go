package boundedfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	os.WriteFile(regular, []byte("hello"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(regular, link)
	fifo := filepath.Join(dir, "fifo")
	if err := fifotest.Make(fifo); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	os.Symlink(fifo, fifoLink)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte(strings.Repeat("x", 11)), 0o600)

	for _, c := range []struct {
		name, path string
		want       string // "" for success, else the error's text
	}{
		{"regular", regular, ""},
		{"symlink to a regular file", link, ""},
		{"exactly the cap", filepath.Join(dir, "regular"), ""},
		{"FIFO", fifo, fifo + " is a named pipe (FIFO), not a regular file"},
		{"symlink to a FIFO", fifoLink, fifoLink + " is a named pipe (FIFO), not a regular file"},
		{"character device", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"directory", dir, dir + " is a directory, not a regular file"},
		{"over the cap", big, big + " is 11 bytes, over the 10 bytes limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
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
