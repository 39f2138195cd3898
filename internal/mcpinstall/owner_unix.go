//go:build unix

package mcpinstall

import (
	"fmt"
	"os"
	"syscall"
)

// owner is who owns a file, and how many names (hard links) it has.
type owner struct {
	uid, gid int
	links    uint64
	known    bool
}

func ownerOf(fi os.FileInfo) owner {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}
	}
	return owner{uid: int(st.Uid), gid: int(st.Gid), links: uint64(st.Nlink), known: true}
}

// keepOwner gives the temporary file f the owner of the file it replaces:
// a file of another user, edited by root (sudo, or a provisioning script),
// stays that user's. It is a no-op when f already has that owner; a
// change the process may not make is an error, not a file silently made
// its own.
func keepOwner(f *os.File, o owner) error {
	if !o.known {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if now := ownerOf(fi); now.known && now.uid == o.uid && now.gid == o.gid {
		return nil
	}
	if err := f.Chown(o.uid, o.gid); err != nil {
		return fmt.Errorf("the file belongs to uid %d, gid %d, and a2a-courier, running as uid %d, cannot give its new version that owner (%v): run mcp install as its owner",
			o.uid, o.gid, os.Geteuid(), errUnwrapped(err))
	}
	return nil
}
