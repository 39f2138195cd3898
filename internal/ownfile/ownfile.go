// Package ownfile keeps the files a2a-courier owns (task records, locks,
// logs, replies, the config file it writes) the same on every system:
//
//   - private to the user: created 0600 (directories 0700) on Unix, with an
//     owner-only protected DACL on Windows, which has no modes;
//   - open while they are replaced: on Windows a file is opened so that it
//     can be renamed over or removed while open (FILE_SHARE_DELETE), and a
//     rename that another program's handle refuses is tried again for a
//     while (Rename);
//   - checked where a secret is read: File and Dir say whether anyone but
//     the owner can get at a file, in the system's own terms (a mode on
//     Unix, the DACL's grants on Windows), with the command that fixes it.
//
// docs/design.md ("Task records", "Configuration and secrets") and
// docs/windows.md say what each system guarantees and what Wine can show.
package ownfile

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Access says whether anyone but a file's owner can get at it, in the
// system's terms.
type Access struct {
	// Open is true when others can read (or change) it.
	Open bool
	// Detail says why, in the system's terms: "mode 0644" on Unix; on
	// Windows "its ACL grants access to Everyone" (and, when it is not
	// open, "owner-only ACL").
	Detail string
	// Hint is the command that makes it private: "chmod 600 <path>" on
	// Unix, an icacls command on Windows.
	Hint string
	// Who is what a message that calls it not private adds: "" on Unix
	// (the message says enough); on Windows ": its ACL grants access to
	// Everyone".
	Who string
}

// CreateTemp creates a new file in dir, private, named by pattern with
// its last "*" replaced by a random string (os.CreateTemp's rule), opened
// for reading and writing. The caller removes it.
func CreateTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	if strings.ContainsAny(prefix+suffix, `/\`) {
		return nil, &os.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains a path separator")}
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// ReadFile reads a whole file the program wrote, opened as OpenFile opens
// (on Windows: so that it can be replaced meanwhile).
func ReadFile(path string) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
