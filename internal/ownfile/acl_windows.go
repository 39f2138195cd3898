package ownfile

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no modes: what 0600 and 0700 say on Unix, a protected DACL
// (one that inherits nothing from its folder) says here. The program
// grants its own files and directories to the user it runs as and to
// SYSTEM:
//
//   - SYSTEM is the system itself (backup, Volume Shadow Copy, the search
//     indexer and antivirus run as it). It can read any file whatever its
//     ACL says (SeBackupPrivilege, or by taking ownership), so leaving it
//     out would protect nothing and break backups; the default ACL of a
//     user's profile grants it too.
//   - Administrators are not granted: the user's own everyday processes do
//     not need them, and other administrators' processes then get no access
//     through the ACL. An administrator can still take ownership of any file
//     (SeTakeOwnershipPrivilege) or read it with backup semantics: no ACL
//     keeps a file from the machine's administrators, on Windows as root on
//     Unix.
//
// The check (File, Dir) accepts grants to the owner, the user, SYSTEM and
// Administrators (what a file in the user's profile inherits by default)
// and refuses a grant to anyone else: Everyone, Users, Authenticated
// Users, another user.

// ownerOnlySDDL is the security descriptor of a private file or directory
// in SDDL: a protected DACL ("P") granting full access to the user (by
// SID) and SYSTEM; a directory's entries are inherited by what is created
// in it ("OICI": files and folders).
func ownerOnlySDDL(userSID string, dir bool) string {
	flags := ""
	if dir {
		flags = "OICI"
	}
	return fmt.Sprintf("D:P(A;%[1]s;FA;;;%[2]s)(A;%[1]s;FA;;;SY)", flags, userSID)
}

// currentUser is the SID of the user this process runs as.
var currentUser = sync.OnceValues(func() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("the user this program runs as: %w", err)
	}
	return u.User.Sid.Copy()
})

var (
	fileSD = sync.OnceValues(func() (*windows.SECURITY_DESCRIPTOR, error) { return ownerOnly(false) })
	dirSD  = sync.OnceValues(func() (*windows.SECURITY_DESCRIPTOR, error) { return ownerOnly(true) })
)

func ownerOnly(dir bool) (*windows.SECURITY_DESCRIPTOR, error) {
	me, err := currentUser()
	if err != nil {
		return nil, err
	}
	return windows.SecurityDescriptorFromString(ownerOnlySDDL(me.String(), dir))
}

// securityAttributes are those of a new private file or directory; the
// handle is not inherited.
func securityAttributes(dir bool) (*windows.SecurityAttributes, error) {
	get := fileSD
	if dir {
		get = dirSD
	}
	sd, err := get()
	if err != nil {
		return nil, err
	}
	return &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}, nil
}

// grant is an ACE that gives someone other than the owner access.
type grant struct {
	SID string
	// Inherited: the ACE came from a parent folder (icacls'
	// /inheritance:r removes it; an explicit one needs /remove).
	Inherited bool
}

// reach is the access that counts as getting at a file's content or
// changing what it is: reading, writing, appending, executing, deleting it
// or its entries, changing its ACL or owner, and the generic rights that
// include those. Reading its attributes or its ACL does not count.
const reach = windows.FILE_READ_DATA | windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_EXECUTE |
	fileDeleteChild | windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER |
	windows.GENERIC_ALL | windows.GENERIC_EXECUTE | windows.GENERIC_WRITE | windows.GENERIC_READ

const (
	fileDeleteChild              = 0x40 // FILE_DELETE_CHILD
	accessAllowedCallbackAceType = 9    // ACCESS_ALLOWED_CALLBACK_ACE_TYPE
	accessDeniedCallbackAceType  = 10   // ACCESS_DENIED_CALLBACK_ACE_TYPE
)

// everyone stands for a DACL that is missing or NULL: no DACL lets anyone
// do anything.
const everyone = "S-1-1-0"

// others lists who, besides the owner, the user me, SYSTEM and
// Administrators, sd's DACL lets get at the object (reach). It reads the
// descriptor alone (nothing of the system's state but SID comparisons),
// so that it can be tested with descriptors made from SDDL. An ACE that
// only its children inherit (inherit-only) grants the object nothing.
// Deny ACEs are not weighed against grants: a file that another ACE
// grants to Everyone counts as open even if a deny ACE would refuse some
// of it (stricter than Windows, never looser).
func others(sd *windows.SECURITY_DESCRIPTOR, me *windows.SID) ([]grant, error) {
	dacl, _, err := sd.DACL()
	if errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || (err == nil && dacl == nil) {
		return []grant{{SID: everyone}}, nil // no DACL, or a NULL one
	}
	if err != nil {
		return nil, err
	}
	owner, _, _ := sd.Owner()
	var out []grant
	for i := 0; i < int(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, uint32(i), &ace); err != nil {
			return nil, err
		}
		if ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 {
			continue
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE, accessDeniedCallbackAceType:
			continue
		case windows.ACCESS_ALLOWED_ACE_TYPE, accessAllowedCallbackAceType:
		default:
			return nil, fmt.Errorf("its ACL holds an entry of a type this program does not read (%d)", ace.Header.AceType)
		}
		if uint32(ace.Mask)&reach == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if trusted(sid, owner, me) {
			continue
		}
		out = append(out, grant{SID: sid.String(), Inherited: ace.Header.AceFlags&windows.INHERITED_ACE != 0})
	}
	return out, nil
}

// trusted reports whether a grant to sid keeps a file private: the owner,
// the user, SYSTEM, Administrators, and the placeholders that grant only
// the owner (OWNER RIGHTS, and CREATOR OWNER, which matches no one).
func trusted(sid, owner, me *windows.SID) bool {
	if (owner != nil && sid.Equals(owner)) || (me != nil && sid.Equals(me)) {
		return true
	}
	for _, k := range []windows.WELL_KNOWN_SID_TYPE{windows.WinLocalSystemSid, windows.WinBuiltinAdministratorsSid,
		windows.WinCreatorOwnerRightsSid, windows.WinCreatorOwnerSid} {
		if sid.IsWellKnown(k) {
			return true
		}
	}
	return false
}

// access describes the result of others for the file or directory path.
func access(path string, dir bool, grants []grant, err error) Access {
	a := Access{Hint: icaclsHint(path, dir, grants)}
	switch {
	case err != nil:
		a.Open, a.Detail = true, "its ACL cannot be read: "+err.Error()
		a.Who = ": " + a.Detail
	case len(grants) > 0:
		names := make([]string, 0, len(grants))
		for _, g := range grants {
			if n := accountName(g.SID); !contains(names, n) {
				names = append(names, n)
			}
		}
		a.Open, a.Detail = true, "its ACL grants access to "+strings.Join(names, ", ")
		a.Who = ": " + a.Detail
	default:
		a.Detail = "owner-only ACL"
	}
	return a
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// icaclsHint is the command that makes path private: inherited entries
// removed, full access granted to the user alone, and each explicit
// entry of someone else removed. Under Wine, whose icacls changes
// nothing, it says what does (Wine derives a file's ACL from its Unix
// mode).
func icaclsHint(path string, dir bool, grants []grant) string {
	who := "%USERNAME%"
	if me, err := currentUser(); err == nil {
		who = accountNameOr(me.String(), "*"+me.String())
	}
	rights := "F"
	if dir {
		rights = "(OI)(CI)F"
	}
	hint := fmt.Sprintf(`icacls "%s" /inheritance:r /grant:r "%s:%s"`, path, who, rights)
	var removed []string
	for _, g := range grants {
		if !g.Inherited && !contains(removed, g.SID) {
			removed = append(removed, g.SID)
			hint += ` /remove "*` + g.SID + `"`
		}
	}
	if underWine() {
		mode := "600"
		if dir {
			mode = "700"
		}
		hint += " (under Wine, whose icacls changes nothing: chmod " + mode + " the file on the Unix side, as Wine's ACLs follow Unix modes)"
	}
	return hint
}

// accountName names a SID as Windows shows it ("BUILTIN\Users",
// "Everyone"), or gives the SID when it names no account.
func accountName(sid string) string { return accountNameOr(sid, sid) }

func accountNameOr(sid, or string) string {
	s, err := windows.StringToSid(sid)
	if err != nil {
		return or
	}
	account, domain, _, err := s.LookupAccount("")
	switch {
	case err != nil || account == "":
		return or
	case domain == "":
		return account
	}
	return domain + `\` + account
}

// UnderWine reports whether this program runs under Wine (its ntdll
// exports wine_get_version), for hints and tests only: what the program
// does is the same.
func UnderWine() bool { return underWine() }

var underWine = sync.OnceValue(func() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
})

// inspect reads path's owner and DACL and says whether others can get at
// it.
func inspect(path string, dir bool) Access {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return access(path, dir, nil, err)
	}
	me, err := currentUser()
	if err != nil {
		return access(path, dir, nil, err)
	}
	grants, err := others(sd, me)
	return access(path, dir, grants, err)
}

// makePrivate gives path the owner-only protected DACL. SetNamedSecurityInfo
// also passes a directory's new entries on to what it holds (Windows
// replaces what they inherited). What the system then reports is checked:
// where it did not keep the DACL asked for (Wine adds the parent's
// inheritable entries even to a protected DACL), the DACL is set on the
// object alone (SetKernelObjectSecurity, which adds nothing).
func makePrivate(path string, dir bool) error {
	get := fileSD
	if dir {
		get = dirSD
	}
	sd, err := get()
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	const info = windows.DACL_SECURITY_INFORMATION | windows.PROTECTED_DACL_SECURITY_INFORMATION
	err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, info, nil, nil, dacl, nil)
	if err == nil && !inspect(path, dir).Open {
		return nil
	}
	p, err := windows.UTF16PtrFromString(extended(path))
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.WRITE_DAC, shareAll, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := windows.SetKernelObjectSecurity(h, info, sd); err != nil {
		return err
	}
	if a := inspect(path, dir); a.Open {
		return errors.New(a.Detail)
	}
	return nil
}
