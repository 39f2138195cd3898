//go:build unix

package boundedfile

import (
	"errors"
	"syscall"
)

// noFollow is the open flag that refuses a symbolic link as the last
// element of the path: the opened file is then the one the path names, and
// a file renamed into its place between the look and the open (a newer
// version of a record, written by rename) is no link either.
const noFollow = syscall.O_NOFOLLOW

// isLink reports whether an open with noFollow failed on a link.
func isLink(err error) bool { return errors.Is(err, syscall.ELOOP) }
