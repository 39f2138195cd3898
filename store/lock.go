package store

import (
	"os"
	"strconv"
	"strings"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// fileLock is a lock held on an open file: flock(2) on Unix, LockFileEx on
// Windows. The kernel frees it when the process dies, however it dies, so
// "is anyone working on this" is answered by trying to take it, never by
// guessing from a PID.
type fileLock struct{ f *os.File }

func tryLock(path string) (*fileLock, error) {
	f, err := ownfile.OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() {
	unlockFile(l.f)
	l.f.Close()
}

// writeOwner writes this process's id into the lock file, for whoever
// finds the lock held; best effort (a full disk does not undo the lock).
func (l *fileLock) writeOwner() {
	if l.f.Truncate(0) == nil {
		l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// readOwner returns the process id a lock's holder wrote, 0 when unknown.
func readOwner(path string) int {
	b := make([]byte, 32)
	f, err := ownfile.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, _ := f.Read(b)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
