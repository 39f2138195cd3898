package store

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// rotateLog makes path the log's previous generation, path.1, replacing the
// one before. Every handle on the logs shares deletion (FILE_SHARE_DELETE),
// so a file a worker holds open can be renamed; but Windows replaces a file
// by renaming over it only once no handle holds it, and a worker holds the
// previous generation for as long as it lives. So that one is first moved
// aside, to a name of its own, and removed: the name goes at once where the
// system deletes with POSIX semantics, else when its last handle closes.
// Then path takes its place. What the worker writes after that goes with
// the removed file, as on Unix, where its inode is unlinked.
func rotateLog(path string) error {
	old := path + ".1"
	if leftovers, _ := filepath.Glob(old + ".*.old"); len(leftovers) > 0 {
		for _, l := range leftovers {
			os.Remove(l) // moved aside by a rotation that stopped short
		}
	}
	if _, err := os.Lstat(old); err == nil {
		aside := old + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + ".old"
		if os.Rename(old, aside) == nil {
			os.Remove(aside)
		}
	}
	return os.Rename(path, old)
}
