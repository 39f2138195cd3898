// Package boundedfile reads the small files a user or a config file names
// (the config file, an API key or token file, a CA bundle) without trusting
// the path: only a regular file is read (a symlink to one is fine), and
// never more than a cap. A FIFO would block the open and then the read for
// as long as nobody writes to it, with no signal able to end the wait;
// /dev/zero would be read until the kernel killed the process.
package boundedfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// NotRegularError reports a path that names something other than a
// regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// TooLargeError reports a file over the cap its reader allows.
type TooLargeError struct {
	Path string
	// Size is the file's size when it was opened; it may have grown since.
	Size int64
	Max  int64
}

func (e *TooLargeError) Error() string {
	if e.Size > e.Max {
		return fmt.Sprintf("%s is %s, over the %s limit", e.Path, SizeText(e.Size), SizeText(e.Max))
	}
	return fmt.Sprintf("%s grew over the %s limit while it was read", e.Path, SizeText(e.Max))
}

// Read returns the contents of the regular file at path, at most max bytes,
// and the file's information. A path that is not a regular file gives a
// *NotRegularError, one over max bytes a *TooLargeError; other errors are
// those of the os package (fs.ErrNotExist for a missing file).
func Read(path string, max int64) ([]byte, fs.FileInfo, error) { return read(path, max, false) }

// ReadNoLink is Read for a file that is not a symbolic link either: one a
// program wrote itself, by rename, in a directory of its own, where a link
// is not its own. A link gives a *NotRegularError, and so does a path
// replaced by another file between the look and the open.
func ReadNoLink(path string, max int64) ([]byte, fs.FileInfo, error) { return read(path, max, true) }

func read(path string, max int64, noLink bool) ([]byte, fs.FileInfo, error) {
	f, fi, err := open(path, max, noLink)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fi, err
	}
	if int64(len(b)) > max {
		// It grew while it was read.
		return nil, fi, &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	return b, fi, nil
}

// OpenNoLink opens the regular file at path, not a symbolic link, of at
// most max bytes when opened, for a caller that reads it a piece at a
// time; the errors are ReadNoLink's. The caller closes the file, and
// reads no more than it means to: the file may grow.
func OpenNoLink(path string, max int64) (*os.File, error) {
	f, _, err := open(path, max, true)
	return f, err
}

func open(path string, max int64, noLink bool) (*os.File, fs.FileInfo, error) {
	// The path is looked at before it is opened: opening a device can have
	// effects of its own.
	stat := os.Stat
	if noLink {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := check(path, fi, max); err != nil {
		return nil, fi, err
	}
	// O_NONBLOCK, should the path have become a FIFO since: its open then
	// returns at once instead of waiting for a writer. A regular file reads
	// the same with or without it.
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noLink {
		flags |= noFollow
	}
	// ownfile.OpenFile: on Windows, shared so that the file can be renamed
	// over or removed while it is read (a record its worker replaces).
	f, err := ownfile.OpenFile(path, flags)
	if noLink && isLink(err) {
		// A link put in its place since the look.
		return nil, nil, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
	}
	if err != nil {
		return nil, nil, err
	}
	// What was opened is what counts.
	looked := fi
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if noLink && noFollow == 0 && !os.SameFile(looked, fi) {
		// Where the open cannot refuse a link: another file put in its
		// place since the look may be one. (With noFollow, a file renamed
		// into place meanwhile, a newer version of a record, is read.)
		f.Close()
		return nil, fi, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
	}
	if err := check(path, fi, max); err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

func check(path string, fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > max {
		return &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	return nil
}

// Kind names the type of file a mode says, as a person would: "a directory",
// "a named pipe (FIFO)".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file"
}

// SizeText writes a size the way people read it: 512 bytes, 64 KiB, 1.5 MiB.
func SizeText(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/1024, units[0]
	for _, u := range units[1:] {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}
