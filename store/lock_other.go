//go:build !unix

package store

import "errors"

type fileLock struct{}

func tryLock(string) (*fileLock, error) {
	return nil, errors.New("task locks need a Unix system (Linux or macOS)")
}

func (*fileLock) release() {}

func (*fileLock) writeOwner() {}

func readOwner(string) int { return 0 }
