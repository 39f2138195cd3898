//go:build !unix && !windows

package store

import (
	"errors"
	"os"
)

func lockFile(*os.File) error {
	return errors.New("task locks need a Unix system (Linux or macOS) or Windows")
}

func unlockFile(*os.File) {}
