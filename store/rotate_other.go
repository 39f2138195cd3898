//go:build !windows

package store

import "os"

// rotateLog makes path the log's previous generation, path.1, replacing the
// one before. A process that holds either open keeps writing to the file
// it has, under its new name or none.
func rotateLog(path string) error { return os.Rename(path, path+".1") }
