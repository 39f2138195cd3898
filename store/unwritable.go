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
func (e *UnwritableError) Full() bool {
	return errors.Is(e.Err, syscall.ENOSPC) || errors.Is(e.Err, syscall.EDQUOT) || errors.Is(e.Err, syscall.EFBIG)
}

// ReadOnly reports whether the file system is mounted read-only.
func (e *UnwritableError) ReadOnly() bool { return errors.Is(e.Err, syscall.EROFS) }

// unwritableErrnos are the errors that make a state directory unusable
// until someone changes it. EFBIG is a file-size limit (ulimit -f); EPERM,
// for root, an immutable directory (chattr +i).
var unwritableErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EROFS, syscall.EACCES, syscall.EPERM}

// unwritable wraps err in an *UnwritableError when it is one of those.
func (s *Store) unwritable(err error) error {
	var ue *UnwritableError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	for _, errno := range unwritableErrnos {
		if errors.Is(err, errno) {
			return &UnwritableError{Dir: s.dir, Err: err}
		}
	}
	return err
}
