//go:build unix

package store

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fileLock is an advisory lock held on an open file. The kernel frees it
// when the process dies, however it dies, so "is anyone working on this" is
// answered by trying to take it, never by guessing from a PID.
type fileLock struct{ f *os.File }

func tryLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
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
	f, err := os.Open(path)
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
