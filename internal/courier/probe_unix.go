//go:build unix

package courier

import (
	"os"

	"golang.org/x/sys/unix"
)

// detached reports whether this process leads a session of its own.
func detached() bool {
	sid, err := unix.Getsid(0)
	return err == nil && sid == os.Getpid()
}

// inJob is false: Unix has no job objects (a session of its own is out of
// its caller's process group already).
func inJob() bool { return false }

// stdinIsNull reports whether stdin is /dev/null.
func stdinIsNull() bool {
	fi, err := os.Stdin.Stat()
	if err != nil {
		return false
	}
	dn, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, dn)
}
