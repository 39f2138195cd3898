package oshint

import (
	"path/filepath"
	"strings"

	"github.com/a2a-courier/a2a-courier/store"
)

// Windows' texts: no df, ls or kill (oshint_unix.go has Unix's).

// Unwritable says what to do about a state directory Windows refuses
// to write: its drive is full (or a quota), write-protected, or the
// folder's permissions deny this user.
func Unwritable(ue *store.UnwritableError) string {
	switch {
	case ue.Full():
		drive := "the drive that holds it"
		if v := filepath.VolumeName(ue.Dir); len(v) == 2 && v[1] == ':' {
			drive = "drive " + strings.ToUpper(v) + " (Get-PSDrive " + strings.ToUpper(v[:1]) + " in PowerShell, or the drive's Properties in Explorer)"
		} else if v != "" {
			drive = v
		}
		return "free space on " + drive + ", or point A2A_COURIER_STATE_DIR at a folder on a drive with room"
	case ue.ReadOnly():
		return "its drive is write-protected: point A2A_COURIER_STATE_DIR at a writable folder"
	}
	return "check that this user may write in it (icacls " + winQuote(ue.Dir) + ", or the folder's Properties, Security tab), " +
		"or point A2A_COURIER_STATE_DIR at a folder it can write"
}

// winQuote quotes a path for cmd and PowerShell alike when it needs it.
func winQuote(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t&()[]{}^=;!'+,`~$#@%") {
		return p
	}
	return `"` + p + `"`
}
