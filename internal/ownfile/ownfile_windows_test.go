package ownfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// The check reads a security descriptor alone: these are made from SDDL,
// so they test it wherever it runs (Windows, Wine) whatever the file
// system keeps.
func TestOthersOfDescriptors(t *testing.T) {
	const me = "S-1-5-21-1-2-3-1001"
	const bob = "S-1-5-21-1-2-3-1002"
	for _, c := range []struct {
		name, sddl string
		want       []grant
	}{
		{"owner-only, as the program makes", ownerOnlySDDL(me, false), nil},
		{"owner-only directory", ownerOnlySDDL(me, true), nil},
		{"a user profile's default", "O:" + me + "D:(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;FA;;;" + me + ")", nil},
		{"owned by Administrators, the user granted", "O:BAD:(A;;FA;;;BA)(A;;FA;;;" + me + ")", nil},
		{"the owner by OWNER RIGHTS", "O:" + me + "D:P(A;;FA;;;OW)", nil},
		{"an owner other than the user", "O:" + bob + "D:P(A;;FA;;;" + bob + ")", nil},
		{"CREATOR OWNER, inherit-only", "D:P(A;;FA;;;" + me + ")(A;OICIIO;GA;;;CO)", nil},
		{"Users, inherit-only", "D:P(A;;FA;;;" + me + ")(A;OICIIO;GR;;;BU)", nil},
		{"Everyone may read attributes and the ACL only", "D:P(A;;FA;;;" + me + ")(A;;0x120080;;;WD)", nil},
		{"no access at all", "D:P", nil},
		{"Everyone may read", "D:P(A;;FA;;;" + me + ")(A;;FR;;;WD)", []grant{{SID: "S-1-1-0"}}},
		{"Users inherited read and execute", "D:(A;ID;FA;;;" + me + ")(A;ID;0x1200a9;;;BU)", []grant{{SID: "S-1-5-32-545", Inherited: true}}},
		{"Authenticated Users may modify", "D:(A;;FA;;;" + me + ")(A;ID;0x1301bf;;;AU)", []grant{{SID: "S-1-5-11", Inherited: true}}},
		{"another user, by generic read", "D:P(A;;FA;;;" + me + ")(A;;GR;;;" + bob + ")", []grant{{SID: bob}}},
		{"another user may only append", "D:P(A;;FA;;;" + me + ")(A;;0x4;;;" + bob + ")", []grant{{SID: bob}}},
		{"another user may change the ACL", "D:P(A;;FA;;;" + me + ")(A;;WD;;;" + bob + ")", []grant{{SID: bob}}},
		{"a deny entry does not hide a grant", "D:P(D;;FR;;;WD)(A;;FA;;;" + me + ")(A;;FR;;;WD)", []grant{{SID: "S-1-1-0"}}},
		{"two others", "D:P(A;;FA;;;" + me + ")(A;;FR;;;WD)(A;ID;FR;;;BU)", []grant{{SID: "S-1-1-0"}, {SID: "S-1-5-32-545", Inherited: true}}},
		{"no DACL", "O:" + me, []grant{{SID: everyone}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sd, err := windows.SecurityDescriptorFromString(c.sddl)
			if err != nil {
				t.Fatalf("%s: %v", c.sddl, err)
			}
			mine, _ := windows.StringToSid(me)
			got, err := others(sd, mine)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: %+v %v, want %+v", c.sddl, got, err, c.want)
			}
		})
	}
}

// A NULL DACL lets everyone do everything. (Made with SetDACL: Wine's
// SDDL parser makes an empty DACL of "D:NO_ACCESS_CONTROL".)
func TestOthersOfANullDACL(t *testing.T) {
	sd, err := windows.NewSecurityDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.SetDACL(nil, true, false); err != nil {
		t.Fatal(err)
	}
	if got, err := others(sd, nil); err != nil || !reflect.DeepEqual(got, []grant{{SID: everyone}}) {
		t.Errorf("%+v %v", got, err)
	}
}

// The descriptor the program gives its files and directories is
// protected (inherits nothing from its folder), grants the user and
// SYSTEM full access, and a directory's entries pass on to what it holds.
func TestOwnerOnlyDescriptor(t *testing.T) {
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []bool{false, true} {
		sddl := ownerOnlySDDL(me.String(), dir)
		sd, err := windows.SecurityDescriptorFromString(sddl)
		if err != nil {
			t.Fatal(err)
		}
		control, _, err := sd.Control()
		if err != nil || control&windows.SE_DACL_PROTECTED == 0 {
			t.Errorf("%s: not protected (%v %v)", sddl, control, err)
		}
		want := "D:P(A;;FA;;;" + me.String() + ")(A;;FA;;;SY)"
		if dir {
			want = "D:P(A;OICI;FA;;;" + me.String() + ")(A;OICI;FA;;;SY)"
		}
		if got := sd.String(); got != want {
			t.Errorf("descriptor %s, want %s", got, want)
		}
		if g, err := others(sd, me); len(g) != 0 || err != nil {
			t.Errorf("%s grants others: %v %v", sddl, g, err)
		}
	}
}

// The hint removes inherited entries, grants the user alone, and removes
// explicit entries of others by SID.
func TestHint(t *testing.T) {
	path := `C:\Users\ada\AppData\Roaming\a2a-courier\config.yaml`
	grants := []grant{{SID: "S-1-5-32-545", Inherited: true}, {SID: "S-1-1-0"}, {SID: "S-1-1-0"}}
	a := access(path, false, grants, nil)
	if !a.Open || !strings.HasPrefix(a.Detail, "its ACL grants access to ") {
		t.Errorf("%+v", a)
	}
	if !strings.HasPrefix(a.Hint, `icacls "`+path+`" /inheritance:r /grant:r "`) || !strings.Contains(a.Hint, `:F" /remove "*S-1-1-0"`) ||
		strings.Count(a.Hint, "/remove") != 1 {
		t.Errorf("file hint %q", a.Hint)
	}
	if d := access(path, true, nil, nil); d.Open || d.Detail != "owner-only ACL" || !strings.Contains(d.Hint, `:(OI)(CI)F"`) {
		t.Errorf("directory: %+v", d)
	}
	if underWine() != strings.Contains(a.Hint, "chmod 600") {
		t.Errorf("under Wine %v, hint %q", underWine(), a.Hint)
	}
}

// A rename over a file that a reader holds open without FILE_SHARE_DELETE
// (Go's os.Open; an antivirus scanner) is refused while it is open: Rename
// waits, and succeeds once the reader closes it.
func TestRenameWaitsForAReaderWithoutShareDelete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	os.WriteFile(path, []byte("old"), 0o600)
	tmp := filepath.Join(dir, "record.json.tmp")
	os.WriteFile(tmp, []byte("new"), 0o600)
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 1)
	onRetry = func(err error) {
		select {
		case refused <- err:
		default:
		}
	}
	t.Cleanup(func() { onRetry = nil })
	done := make(chan error, 1)
	go func() { done <- Rename(tmp, path) }()
	select {
	case err := <-refused:
		if !refusedByAHandle(err) {
			t.Errorf("refused with %v", err)
		}
	case err := <-done:
		t.Fatalf("the rename returned (%v) while a reader without FILE_SHARE_DELETE had the file open", err)
	}
	reader.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("%q", b)
	}
}

// A reader that opens through OpenFile does not keep the file from being
// removed while it reads.
func TestOpenFileSharesDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reply.txt")
	os.WriteFile(path, []byte("reply"), 0o600)
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil {
		t.Errorf("remove while open: %v", err)
	}
}
