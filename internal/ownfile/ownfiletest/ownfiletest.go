// Package ownfiletest makes files private or open to others for tests, in
// each system's terms (a mode on Unix, a DACL on Windows), and says whether
// a file is private as the program requires, so that a test of the
// privacy checks asserts the same thing on every system.
package ownfiletest

import (
	"fmt"
	"os"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// FileProblem says why the file at path is not private as the program
// makes its files ("" when it is): on Unix its mode is not 0600; on
// Windows its DACL, read back, grants someone else access.
func FileProblem(path string) string { return problem(path, false) }

// DirProblem is FileProblem for a directory (0700 on Unix).
func DirProblem(path string) string { return problem(path, true) }

func problem(path string, dir bool) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	if p := modeProblem(fi, dir); p != "" {
		return p
	}
	a := ownfile.File(path, fi)
	if dir {
		a = ownfile.Dir(path, fi)
	}
	if a.Open {
		return fmt.Sprintf("%s: %s", path, a.Detail)
	}
	return ""
}
