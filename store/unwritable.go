package store

import (
	"errors"
	"syscall"
)

// UnwritableError reports a write to the state directory that the system
// refused for a reason no retry mends: the disk or the quota is full, the
// file system is read-only, this user may not write there. Callers report
// it as a problem of the set-up, naming the directory, not as a bug.
type UnwritableError struct {
	// Dir is the state directory.
	Dir string
	Err error
}

func (e *UnwritableError) Error() string {
	return "cannot write to the state directory " + e.Dir + ": " + e.Err.Error()
}

func (e *UnwritableError) Unwrap() error { return e.Err }

// Full reports whether the disk or a quota is full (or a file-size limit
// refused the write).
func (e *UnwritableError) Full() bool { return isErrno(e.Err, fullErrnos) }

// ReadOnly reports whether the file system is read-only (on Windows: the
// medium is write-protected).
func (e *UnwritableError) ReadOnly() bool { return isErrno(e.Err, readOnlyErrnos) }

// unwritableErrnos are the errors that make a state directory unusable
// until someone changes it: full, read-only, or denied to this user. The
// lists are the system's (unwritable_unix.go, unwritable_windows.go).
var unwritableErrnos = append(append(append([]syscall.Errno{}, fullErrnos...), readOnlyErrnos...), deniedErrnos...)

func isErrno(err error, errnos []syscall.Errno) bool {
	for _, errno := range errnos {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// unwritable wraps err in an *UnwritableError when it is one of those.
func (s *Store) unwritable(err error) error {
	var ue *UnwritableError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	if isErrno(err, unwritableErrnos) {
		return &UnwritableError{Dir: s.dir, Err: err}
	}
	return err
}
