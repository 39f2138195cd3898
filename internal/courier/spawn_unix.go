//go:build unix

package courier

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultCredentialHandle is the descriptor on which a spawned worker
// receives its credential: never argv, never a file. spawn puts the
// credential pipe there (the first of exec's ExtraFiles).
const DefaultCredentialHandle = 3

// CredentialWhere says where a worker looks for its credential, for the
// error a worker started by hand gets.
const CredentialWhere = "descriptor 3"

// startDetached starts the worker command in a session of its own, so that
// neither the caller's terminal (SIGHUP when it closes) nor its process
// group (Ctrl-C, a tool runner's kill of the group) reaches it, in "/" so
// that it keeps no directory busy, with the credential pipe on descriptor 3
// and no other descriptor of this process's but its three standard ones.
func startDetached(command func(extra ...string) *exec.Cmd, cred *os.File) (*exec.Cmd, string, error) {
	cmd := command()
	cmd.ExtraFiles = []*os.File{cred}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	markInheritedCloseOnExec()
	return cmd, "", cmd.Start()
}

// markInheritedCloseOnExec makes sure a worker inherits nothing of this
// process but what spawn hands it: stdin, stdout, stderr and the credential
// pipe, which os/exec puts in place after the fork whatever their flags. Go
// opens its own descriptors close-on-exec, but a descriptor this process
// itself inherited without that flag (a script's `exec 9>lock; flock 9`, a
// tool runner's pipe that it reads to EOF) would pass on to a worker that
// lives for hours, holding the script's lock and keeping the runner waiting.
//
// The spawner is the place to fix it, not the worker. Marked here, those
// descriptors close in the worker at exec, so it never holds them, not even
// until its main runs; this process, about to exit, keeps its own. The
// worker could only close them after its runtime has started and opened
// descriptors of its own (the cgroup files Go reads GOMAXPROCS from, its
// poller), which it would have to tell apart from the caller's.
//
// Windows needs no such step: there a child inherits only the handles
// CreateProcess lists (spawn_windows.go).
func markInheritedCloseOnExec() {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} { // Linux, macOS
		d, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			continue
		}
		for _, name := range names {
			if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
				unix.CloseOnExec(fd)
			}
		}
		return
	}
	// No descriptor directory (a chroot without /proc): every number the
	// limit allows, within a bound.
	limit := uint64(1 << 16)
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur < limit {
		limit = rl.Cur
	}
	for fd := 3; uint64(fd) < limit; fd++ {
		unix.CloseOnExec(fd)
	}
}

// envName is an environment variable's name as this system compares names:
// as it is (Unix names are case-sensitive).
func envName(name string) string { return name }

// platformVar reports whether a worker keeps a variable this system's
// programs need besides the common ones: none on Unix.
func platformVar(string) bool { return false }
