//go:build windows

// Command limits shows, one line per check, how the Windows system it runs
// on (Wine, or Windows itself) behaves where a2a-courier's Windows port
// depends on it: byte-range locks, ACLs, renames over open files, job
// objects, console control events, detached children and inherited
// handles. Each line says what was seen and what Windows documents, so a
// run under Wine shows what a Wine run of the tests can and cannot prove
// (docs/windows.md). It is a probe, not a test: it asserts nothing.
//
//	GOOS=windows GOARCH=amd64 go build -o limits.exe ./scripts/wine/limits
//	scripts/wine/run limits.exe
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

const roleEnv = "A2A_WINE_LIMITS_ROLE"

func main() {
	if role := os.Getenv(roleEnv); role != "" {
		child(role)
		return
	}
	dir, err := os.MkdirTemp("", "a2a-wine-limits")
	if err != nil {
		fmt.Println("temp dir:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	for _, c := range []struct {
		name, windows string
		run           func(dir string) string
	}{
		{"lock conflict (LockFileEx, fail at once)", "ERROR_LOCK_VIOLATION for a second handle", lockConflict},
		{"lock wait (LockFileEx, blocking)", "waits until the holder unlocks", lockWait},
		{"lock on read (ReadFile in a locked range)", "ERROR_LOCK_VIOLATION: locks are mandatory", lockRead},
		{"lock of a killed process", "freed by the kernel", lockKilled},
		{"ACL (a DACL that grants the owner nothing)", "ERROR_ACCESS_DENIED on open", aclDeny},
		{"rename over a file open without FILE_SHARE_DELETE", "ERROR_ACCESS_DENIED (sharing)", renameOverOpen},
		{"os.Rename over a file open with FILE_SHARE_DELETE", "not documented to replace a file with open handles; unverified", renameOverShared},
		{"os.Root.Rename (POSIX semantics), same", "allowed: FILE_RENAME_POSIX_SEMANTICS replaces a file with open handles", posixRenameOverShared},
		{"fsync of a directory", "ERROR_ACCESS_DENIED, as issue 20 reports (not run here)", syncDir},
		{"job object, kill on close", "the child in the job dies, the one broken away lives", job},
		{"breakaway from a job without BREAKAWAY_OK", "CreateProcess fails, ERROR_ACCESS_DENIED", breakawayRefused},
		{"CTRL_BREAK_EVENT to a new process group", "the child gets os.Interrupt", ctrlBreak},
		{"detached child with an inherited pipe handle", "reads what the parent wrote", detachedHandle},
	} {
		fmt.Printf("%s\n    seen:    %s\n    Windows: %s\n", c.name, c.run(dir), c.windows)
	}
}

// child runs a role for a check in a process of its own.
func child(role string) {
	switch role {
	case "hold-lock":
		f, err := os.OpenFile(os.Getenv("LOCK_FILE"), os.O_RDWR, 0)
		if err == nil {
			err = lock(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, farOffset)
		}
		fmt.Println("locked", err)
		time.Sleep(time.Minute)
	case "sleep":
		time.Sleep(time.Minute)
	case "breakaway":
		bufio.NewReader(os.Stdin).ReadString('\n')
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), roleEnv+"=sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB}
		err := cmd.Start()
		if err == nil {
			cmd.Process.Kill()
		}
		fmt.Println(describe(err, windows.ERROR_ACCESS_DENIED))
	case "job-middle":
		// Wait until the parent put us in its job, then start two
		// children: one in the job, one broken away from it.
		bufio.NewReader(os.Stdin).ReadString('\n')
		in := start(nil, 0, "sleep")
		out := start(nil, windows.CREATE_BREAKAWAY_FROM_JOB, "sleep")
		fmt.Println(in, out)
	case "ctrl":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		fmt.Println("ready")
		select {
		case s := <-ch:
			fmt.Println("got", s)
		case <-time.After(3 * time.Second):
			fmt.Println("nothing within 3 s")
		}
	case "read-handle":
		h, _ := strconv.ParseUint(os.Getenv("HANDLE"), 10, 64)
		f := os.NewFile(uintptr(h), "inherited")
		b := make([]byte, 64)
		n, err := f.Read(b)
		os.WriteFile(os.Getenv("OUT"), []byte(fmt.Sprintf("%s %v", b[:n], err)), 0o600)
	}
}

// farOffset is the byte a2a-courier's locks are to take: far past the end
// of the file, so that readers are not blocked (issue 20).
const farOffset = 1 << 62

func lock(f *os.File, flags uint32, off uint64) error {
	ol := &windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
}

func unlock(f *os.File, off uint64) error {
	ol := &windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

func twoHandles(dir, name string) (*os.File, *os.File, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("hello, world"), 0o600); err != nil {
		return nil, nil, err
	}
	a, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.OpenFile(path, os.O_RDWR, 0)
	return a, b, err
}

func lockConflict(dir string) string {
	a, b, err := twoHandles(dir, "conflict")
	if err != nil {
		return err.Error()
	}
	defer a.Close()
	defer b.Close()
	if err := lock(a, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, farOffset); err != nil {
		return "first lock: " + err.Error()
	}
	err = lock(b, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, farOffset)
	return describe(err, windows.ERROR_LOCK_VIOLATION)
}

func lockWait(dir string) string {
	a, b, err := twoHandles(dir, "wait")
	if err != nil {
		return err.Error()
	}
	defer a.Close()
	defer b.Close()
	if err := lock(a, windows.LOCKFILE_EXCLUSIVE_LOCK, farOffset); err != nil {
		return "first lock: " + err.Error()
	}
	got := make(chan error, 1)
	go func() { got <- lock(b, windows.LOCKFILE_EXCLUSIVE_LOCK, farOffset) }()
	select {
	case err := <-got:
		return fmt.Sprintf("the second lock returned at once while held (%v)", err)
	case <-time.After(time.Second):
	}
	unlock(a, farOffset)
	select {
	case err := <-got:
		return fmt.Sprintf("waited, then got it once released (%v)", err)
	case <-time.After(3 * time.Second):
		return "still waiting 3 s after the release"
	}
}

func lockRead(dir string) string {
	a, b, err := twoHandles(dir, "read")
	if err != nil {
		return err.Error()
	}
	defer a.Close()
	defer b.Close()
	if err := lock(a, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0); err != nil {
		return "lock: " + err.Error()
	}
	_, err = b.ReadAt(make([]byte, 5), 0)
	return describe(err, windows.ERROR_LOCK_VIOLATION)
}

func lockKilled(dir string) string {
	path := filepath.Join(dir, "killed")
	os.WriteFile(path, nil, 0o600)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=hold-lock", "LOCK_FILE="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked <nil>" {
		cmd.Process.Kill()
		cmd.Wait()
		return "child: " + line
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	defer f.Close()
	held := lock(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, farOffset)
	cmd.Process.Kill()
	cmd.Wait()
	after := lock(f, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, farOffset)
	return fmt.Sprintf("while the child holds it: %s; once killed: %v", describe(held, windows.ERROR_LOCK_VIOLATION), after)
}

func aclDeny(dir string) string {
	path := filepath.Join(dir, "acl")
	os.WriteFile(path, []byte("secret"), 0o600)
	guests, err := windows.CreateWellKnownSid(windows.WinBuiltinGuestsSid)
	if err != nil {
		return err.Error()
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_READ,
		AccessMode:        windows.GRANT_ACCESS,
		Trustee:           windows.TRUSTEE{TrusteeForm: windows.TRUSTEE_IS_SID, TrusteeType: windows.TRUSTEE_IS_WELL_KNOWN_GROUP, TrusteeValue: windows.TrusteeValueFromSID(guests)},
	}}, nil)
	if err != nil {
		return err.Error()
	}
	err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
	if err != nil {
		return "set the DACL: " + err.Error()
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	kept := "?"
	if err == nil {
		kept = sd.String()
	}
	_, err = os.ReadFile(path)
	return fmt.Sprintf("open: %s; DACL read back: %s", describe(err, windows.ERROR_ACCESS_DENIED), kept)
}

func renameOverOpen(dir string) string {
	path := filepath.Join(dir, "record.json")
	os.WriteFile(path, []byte("old"), 0o600)
	r, err := os.Open(path) // Go opens with FILE_SHARE_READ|FILE_SHARE_WRITE
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	tmp := path + ".tmp"
	os.WriteFile(tmp, []byte("new"), 0o600)
	return describe(os.Rename(tmp, path), windows.ERROR_ACCESS_DENIED)
}

func renameOverShared(dir string) string {
	path := filepath.Join(dir, "shared.json")
	os.WriteFile(path, []byte("old"), 0o600)
	p, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return err.Error()
	}
	defer windows.CloseHandle(h)
	tmp := path + ".tmp"
	os.WriteFile(tmp, []byte("new"), 0o600)
	return describe(os.Rename(tmp, path), windows.ERROR_ACCESS_DENIED)
}

func posixRenameOverShared(dir string) string {
	path := filepath.Join(dir, "posix.json")
	os.WriteFile(path, []byte("old"), 0o600)
	p, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return err.Error()
	}
	defer windows.CloseHandle(h)
	os.WriteFile(path+".tmp", []byte("new"), 0o600)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err.Error()
	}
	defer root.Close()
	return describe(root.Rename("posix.json.tmp", "posix.json"), windows.ERROR_ACCESS_DENIED)
}

func syncDir(dir string) string {
	d, err := os.Open(dir)
	if err != nil {
		return err.Error()
	}
	defer d.Close()
	return describe(d.Sync(), windows.ERROR_ACCESS_DENIED)
}

// newJob makes a job object that kills its processes when closed.
func newJob(flags uint32) (windows.Handle, error) {
	j, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | flags
	_, err = windows.SetInformationJobObject(j, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return j, err
}

// inJob starts role in a process of its own, puts it in j, then tells it
// to go on (a line on its stdin).
func inJob(j windows.Handle, role string) (*exec.Cmd, *bufio.Reader, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(j, ph)
		windows.CloseHandle(ph)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	fmt.Fprintln(in, "go")
	return cmd, bufio.NewReader(out), nil
}

func breakawayRefused(string) string {
	j, err := newJob(0)
	if err != nil {
		return err.Error()
	}
	defer windows.CloseHandle(j)
	cmd, out, err := inJob(j, "breakaway")
	if err != nil {
		return err.Error()
	}
	line, _ := out.ReadString('\n')
	cmd.Wait()
	return "CREATE_BREAKAWAY_FROM_JOB: " + strings.TrimSpace(line)
}

func start(stdin *os.File, flags uint32, role string, extra ...string) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), roleEnv+"="+role), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if err := cmd.Start(); err != nil {
		return -1
	}
	return cmd.Process.Pid
}

func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

func job(string) string {
	j, err := newJob(windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK)
	if err != nil {
		return err.Error()
	}
	cmd, out, err := inJob(j, "job-middle")
	if err != nil {
		windows.CloseHandle(j)
		return err.Error()
	}
	var inside, broke int
	fmt.Fscan(out, &inside, &broke)
	cmd.Wait()
	windows.CloseHandle(j)
	time.Sleep(500 * time.Millisecond)
	res := fmt.Sprintf("after the job closed: child in the job alive=%v, broken away alive=%v", alive(inside), alive(broke))
	for _, pid := range []int{inside, broke} {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	return res
}

func ctrlBreak(string) string {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=ctrl")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	r := bufio.NewReader(out)
	r.ReadString('\n')
	err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(cmd.Process.Pid))
	line, _ := r.ReadString('\n')
	cmd.Wait()
	return fmt.Sprintf("GenerateConsoleCtrlEvent: %v; the child: %s", err, strings.TrimSpace(line))
}

func detachedHandle(dir string) string {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	outFile := filepath.Join(dir, "handle-out")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=read-handle", "HANDLE="+strconv.FormatUint(uint64(pr.Fd()), 10), "OUT="+outFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags:              windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP,
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(pr.Fd())},
	}
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	pr.Close()
	pw.WriteString("the-credential")
	pw.Close()
	cmd.Wait()
	b, err := os.ReadFile(outFile)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// describe names the outcome: allowed, refused with want, or refused
// otherwise.
func describe(err error, want syscall.Errno) string {
	names := map[syscall.Errno]string{windows.ERROR_LOCK_VIOLATION: "ERROR_LOCK_VIOLATION", windows.ERROR_ACCESS_DENIED: "ERROR_ACCESS_DENIED"}
	switch {
	case err == nil:
		return "allowed"
	case errors.Is(err, want):
		return "refused, " + names[want]
	default:
		return "refused: " + err.Error()
	}
}
