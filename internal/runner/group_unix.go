//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// group is the process group a run's command leads: everything it starts
// is in it, unless it leaves on purpose (setsid).
type group struct{ pgid int }

func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithServer(cmd.SysProcAttr)
}

func (g *group) id() int { return g.pgid }

// KillGroup ends what is left of a process group a run led, when it still
// exists (a server killed mid-run left it): SIGKILL to the group. It
// reports whether there was one.
func KillGroup(pgid int) bool {
	if pgid <= 1 || syscall.Kill(-pgid, 0) != nil {
		return false
	}
	return syscall.Kill(-pgid, syscall.SIGKILL) == nil
}

func started(cmd *exec.Cmd) (*group, error) { return &group{pgid: cmd.Process.Pid}, nil }

// resume lets the command run (on Unix it was never held).
func (g *group) resume(*exec.Cmd) error { return nil }

// stop asks the whole group to end (SIGTERM).
func (g *group) stop() { syscall.Kill(-g.pgid, syscall.SIGTERM) }

// kill ends the whole group at once (SIGKILL). Once the leader has been
// waited for, the group id stays taken while any member lives, so the
// signal reaches only what the command left behind.
func (g *group) kill() { syscall.Kill(-g.pgid, syscall.SIGKILL) }

func (g *group) close() {}
