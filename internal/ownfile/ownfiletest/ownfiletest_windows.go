package ownfiletest

import (
	"io/fs"

	"golang.org/x/sys/windows"
)

func modeProblem(fs.FileInfo, bool) string { return "" }

// Expose gives the file or directory at path a DACL that lets Everyone
// read it beside the user and SYSTEM.
func Expose(path string) error { return setDACL(path, "(A;;FR;;;WD)") }

// Protect gives the file at path the owner-only DACL the program gives
// its own files.
func Protect(path string) error { return setDACL(path, "") }

// setDACL sets a protected DACL granting the user and SYSTEM full access,
// and what extra says, on the file itself (SetKernelObjectSecurity: under
// Wine, SetNamedSecurityInfo adds the parent's inheritable entries even to
// a protected DACL; Wine keeps what it is given as the file's Unix mode).
func setDACL(path, extra string) error {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;" + u.User.Sid.String() + ")(A;;FA;;;SY)" + extra)
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.WRITE_DAC,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return windows.SetKernelObjectSecurity(h, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, sd)
}
