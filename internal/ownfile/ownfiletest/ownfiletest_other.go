//go:build !windows

package ownfiletest

import (
	"fmt"
	"io/fs"
	"os"
)

func modeProblem(fi fs.FileInfo, dir bool) string {
	want := fs.FileMode(0o600)
	if dir {
		want = 0o700
	}
	if fi.Mode().Perm() != want {
		return fmt.Sprintf("%s: mode %04o, want %04o", fi.Name(), fi.Mode().Perm(), want)
	}
	return ""
}

// Expose makes the file or directory at path readable by others (mode
// 0644, a directory 0755).
func Expose(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return os.Chmod(path, 0o755)
	}
	return os.Chmod(path, 0o644)
}

// Protect makes the file at path private (mode 0600).
func Protect(path string) error { return os.Chmod(path, 0o600) }
