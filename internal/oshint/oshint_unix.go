//go:build !windows

package oshint

import (
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/store"
)

// Unix's texts (oshint_windows.go has Windows').

// Unwritable says what to do about a state directory the system
// refuses to write: the disk is full, the file system read-only, or this
// user may not write there.
func Unwritable(ue *store.UnwritableError) string {
	dir := shellcmd.Quote(ue.Dir)
	switch {
	case ue.Full():
		return "free space on the disk that holds it (df -h " + dir + "), or point A2A_COURIER_STATE_DIR at a directory on a disk with room"
	case ue.ReadOnly():
		return "its file system is read-only: point A2A_COURIER_STATE_DIR at a writable directory"
	}
	return "check that this user owns it and may write in it (ls -ld " + dir + "), or point A2A_COURIER_STATE_DIR at a directory it can write"
}
