package store

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/a2a-courier/a2a-courier/internal/fifotest"
)

// The files a test puts where a record should be that a system may not
// have: each maker returns "" once the file is there, or why this system
// cannot make it, for the test to leave that case out and say so.

// makeFIFO makes a FIFO at path: Windows has none.
func makeFIFO(path string) string {
	if err := fifotest.Make(path); err != nil {
		return err.Error()
	}
	return ""
}

// makeSymlink makes a symbolic link: Wine 8's CreateSymbolicLinkW returns
// success and makes nothing; Windows needs Developer Mode or an
// administrator.
func makeSymlink(target, link string) string {
	err := os.Symlink(target, link)
	if fi, lerr := os.Lstat(link); err == nil && lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return ""
	}
	return fmt.Sprintf("no symbolic link can be made here (%v): Wine 8's CreateSymbolicLinkW makes none; Windows needs Developer Mode or an administrator", err)
}

// zeroDevice is a character device that reads without end: /dev/zero, and
// on Windows NUL.
func zeroDevice() string {
	if runtime.GOOS == "windows" {
		return "NUL"
	}
	return "/dev/zero"
}
