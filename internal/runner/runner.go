// Package runner runs a command once for a message, as `a2a-courier serve
// --exec` does: the message text on stdin, the message's files in the
// run's own fresh folder (removed afterwards), an allowlisted environment,
// stdout as the reply (bounded; larger output kept as a file, bounded too),
// stderr lines as status updates (bounded), exit 0 as completed and
// anything else as failed with the last stderr line as its reason. A
// timeout or a cancel ends the command's whole process group (a job object
// on Windows), and so does the command's own exit: nothing it started
// outlives the run. Run returns exactly once, with one Result.
package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/filename"
)

// States of a finished run, in A2A 0.3's names.
const (
	Completed = "completed"
	Failed    = "failed"
	Canceled  = "canceled"
)

// Limits bound what a run may produce.
type Limits struct {
	// Reply is the most stdout carried as the reply text; more is kept as
	// a file (Result.Output) instead.
	Reply int64
	// Output is the most stdout kept at all: a command that prints more is
	// ended, and its run fails.
	Output int64
	// StatusLines is the most stderr lines passed on as status updates;
	// LineBytes cuts each line.
	StatusLines int
	LineBytes   int
	// Grace is how long a command asked to stop (SIGTERM) has before its
	// group is killed.
	Grace time.Duration
	// DrainDelay is how long the pipes are read once the command has
	// exited or its group was killed (as exec.Cmd.WaitDelay): a process
	// that left the group (setsid) and holds them does not hold the run.
	DrainDelay time.Duration
}

// DefaultLimits are serve's defaults.
var DefaultLimits = Limits{Reply: 64 << 10, Output: 16 << 20, StatusLines: 200, LineBytes: 1 << 10, Grace: 2 * time.Second, DrainDelay: 2 * time.Second}

// File is a file of the message, written into the run's folder.
type File struct {
	Name  string
	Bytes []byte
}

// Job is one run.
type Job struct {
	Argv  []string
	Stdin []byte
	Files []File
	// Env is added to the allowlisted environment (A2A_CONTEXT_ID, …).
	Env map[string]string
	// Timeout bounds the run; 0 is none.
	Timeout time.Duration
	// OnStatus, when set, gets each stderr line (cut at LineBytes), up to
	// StatusLines of them, in order, from one goroutine.
	OnStatus func(line string)
	// OnStart, when set, is told of the started command before the run is
	// watched, so that a server killed meanwhile can end it later.
	OnStart func(Started)
}

// Started is a run's command once it started: its pid, the process group
// it leads (0 on Windows, where its job object dies with the server) and
// its folder.
type Started struct {
	Pid, Pgid int
	Dir       string
}

// Result is how a run ended.
type Result struct {
	// State is Completed, Failed or Canceled.
	State string
	// Reply is stdout when it fits in Limits.Reply.
	Reply string
	// Output is the whole of stdout when it is larger than Limits.Reply
	// (at most Limits.Output).
	Output []byte
	// Reason says why a run did not complete.
	Reason string
	// ExitCode is the command's, -1 when it did not exit by itself.
	ExitCode int
	// StdoutBytes and StderrLines count what the command wrote.
	StdoutBytes int64
	StderrLines int
}

// DirPrefix begins the name of each run's folder.
const DirPrefix = "a2a-serve-run-"

// Runner runs jobs.
type Runner struct {
	Limits Limits
	// TempRoot is where each run's folder is made ("" is os.TempDir()).
	TempRoot string
	// LookupEnv reads the server's environment, of which only the
	// allowlisted names are passed on.
	LookupEnv func(string) (string, bool)
}

// allowedEnv is what a command gets of the server's environment: enough
// to find programs, its home and its language, nothing else (no tokens,
// no keys, no A2A_COURIER_*).
var allowedEnv = []string{"PATH", "HOME", "USERPROFILE", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
	"SystemRoot", "SYSTEMROOT", "COMSPEC", "PATHEXT", "WINDIR", "APPDATA", "LOCALAPPDATA"}

// Env is the environment of a run whose folder is dir: the allowlisted
// names the server has, TMPDIR/TMP/TEMP pointing into the run's folder,
// then extra.
func (r *Runner) Env(dir string, extra map[string]string) []string {
	var env []string
	look := r.LookupEnv
	if look == nil {
		look = os.LookupEnv
	}
	for _, k := range allowedEnv {
		if v, ok := look(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
		env = append(env, k+"="+dir)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// Run runs j once and returns how it ended. ctx's end cancels the run
// (State Canceled).
func (r *Runner) Run(ctx context.Context, j Job) Result {
	lim := r.limits()
	if len(j.Argv) == 0 {
		return Result{State: Failed, Reason: "no command to run", ExitCode: -1}
	}
	dir, err := os.MkdirTemp(r.TempRoot, DirPrefix)
	if err != nil {
		return Result{State: Failed, Reason: "cannot make the run's folder: " + err.Error(), ExitCode: -1}
	}
	defer os.RemoveAll(dir)
	if err := writeFiles(dir, j.Files); err != nil {
		return Result{State: Failed, Reason: err.Error(), ExitCode: -1}
	}
	var cancelTimeout context.CancelFunc = func() {}
	runCtx := ctx
	if j.Timeout > 0 {
		runCtx, cancelTimeout = context.WithTimeout(ctx, j.Timeout)
	}
	defer cancelTimeout()
	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	cmd.Dir = dir
	cmd.Env = r.Env(dir, j.Env)
	prepare(cmd)
	p, err := startPiped(cmd, j.Stdin)
	if err != nil {
		return Result{State: Failed, Reason: "cannot start the command: " + oneLine(err.Error()), ExitCode: -1}
	}
	if j.OnStart != nil {
		j.OnStart(Started{Pid: cmd.Process.Pid, Pgid: p.g.id(), Dir: dir})
	}
	return r.watch(ctx, runCtx, cmd, p, j, lim)
}

func (r *Runner) limits() Limits {
	l := r.Limits
	d := DefaultLimits
	if l.Reply <= 0 {
		l.Reply = d.Reply
	}
	if l.Output < l.Reply {
		l.Output = max(d.Output, l.Reply)
	}
	if l.StatusLines <= 0 {
		l.StatusLines = d.StatusLines
	}
	if l.LineBytes <= 0 {
		l.LineBytes = d.LineBytes
	}
	if l.Grace <= 0 {
		l.Grace = d.Grace
	}
	if l.DrainDelay <= 0 {
		l.DrainDelay = d.DrainDelay
	}
	return l
}

// writeFiles writes the message's files into dir by their names as the
// store saves a part's (filename.Safe: the last element only, no
// controls, no hidden file, what Windows refuses replaced); a name taken
// already gets a numbered one.
func writeFiles(dir string, files []File) error {
	taken := map[string]bool{}
	for i, f := range files {
		name := filename.Safe(f.Name)
		for n := i + 1; taken[name]; n++ {
			name = fmt.Sprintf("file-%d", n)
		}
		taken[name] = true
		if err := os.WriteFile(filepath.Join(dir, name), f.Bytes, 0o600); err != nil {
			return fmt.Errorf("cannot write the message's file %q: %v", name, err)
		}
	}
	return nil
}

// piped is a started command and its streams.
type piped struct {
	g      *group
	stdout *os.File
	stderr *os.File
}

// startPiped starts cmd with stdin fed from data and its own pipes for
// stdout and stderr (os.Pipe, not exec's: cmd.Wait then returns when the
// command exits, not when the last holder of the pipes does).
func startPiped(cmd *exec.Cmd, data []byte) (*piped, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW, errR, errW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	g, err := started(cmd)
	if err == nil {
		err = g.resume(cmd)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		closeAll(inW, outR, errR)
		return nil, err
	}
	go func() {
		// A command that does not read its stdin gets EPIPE here: fine.
		inW.Write(data)
		inW.Close()
	}()
	return &piped{g: g, stdout: outR, stderr: errR}, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// Why a run was ended before its command exited by itself.
const (
	endedNot     = ""
	endedCancel  = "cancel"
	endedTimeout = "timeout"
	endedOutput  = "output"
	// endedHeld: the command exited, but a process it started outside its
	// group kept its output open past DrainDelay: the output may be cut.
	endedHeld = "held"
)

// watch waits for the command to exit, for the run's end (a cancel, the
// timeout) or for stdout past its bound, whichever comes first; then ends
// the group, whatever the command left running in it, and reads the last
// of its output.
func (r *Runner) watch(ctx, runCtx context.Context, cmd *exec.Cmd, p *piped, j Job, lim Limits) Result {
	defer p.g.close()
	out := &stdoutSink{limit: lim.Output, over: make(chan struct{})}
	errs := &stderrSink{lim: lim, onStatus: j.OnStatus}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); out.read(p.stdout) }()
	go func() { defer wg.Done(); errs.read(p.stderr) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	why := endedNot
	var werr error
	select {
	case werr = <-exited:
	case <-runCtx.Done():
		why = endedTimeout
		if ctx.Err() != nil {
			why = endedCancel
		}
		werr = end(p.g, exited, lim.Grace)
	case <-out.over:
		why = endedOutput
		werr = end(p.g, exited, lim.Grace)
	}
	// The command has exited: anything of its group still running is left
	// over, and goes too (its pipes close with it). A process that left
	// the group (setsid) may hold them still: they are read for DrainDelay
	// at most (and, when the command exited by itself, not past the run's
	// end), then closed.
	p.g.kill()
	read := make(chan struct{})
	go func() { wg.Wait(); close(read) }()
	var watchCtx <-chan struct{}
	if why == endedNot {
		watchCtx = runCtx.Done()
	}
	drained, ctxEnded := drain(read, watchCtx, lim.DrainDelay)
	closeAll(p.stdout, p.stderr)
	<-read
	switch {
	case why == endedNot && ctxEnded:
		why = endedTimeout
		if ctx.Err() != nil {
			why = endedCancel
		}
	case why == endedNot && out.overflow:
		why = endedOutput
	case why == endedNot && !drained:
		why = endedHeld
	}
	return result(why, werr, out, errs, j, lim)
}

// drain waits until the pipes are read to their end (read), for delay at
// most, and not past ctxDone when given; drained is false when it stopped
// first, ctxEnded when ctxDone did.
func drain(read, ctxDone <-chan struct{}, delay time.Duration) (drained, ctxEnded bool) {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-read:
		return true, false
	case <-t.C:
		return false, false
	case <-ctxDone:
		return false, true
	}
}

// end asks the group to stop, kills it after grace, and returns the
// command's exit.
func end(g *group, exited <-chan error, grace time.Duration) error {
	g.stop()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
		g.kill()
		return <-exited
	}
}

func result(why string, werr error, out *stdoutSink, errs *stderrSink, j Job, lim Limits) Result {
	res := Result{ExitCode: exitCode(werr), StdoutBytes: out.n, StderrLines: errs.lines}
	if int64(out.buf.Len()) <= lim.Reply {
		res.Reply = out.buf.String()
	} else {
		res.Output = out.buf.Bytes()
	}
	switch {
	case why == endedCancel:
		res.State, res.Reason = Canceled, "the run was canceled"
	case why == endedTimeout:
		res.State, res.Reason = Failed, fmt.Sprintf("the command ran past its limit of %s and was ended", j.Timeout)
	case why == endedOutput:
		res.State, res.Reason = Failed, fmt.Sprintf("the command printed more than %d bytes and was ended", lim.Output)
		res.Reply, res.Output = "", nil
	case why == endedHeld:
		res.State = Failed
		res.Reason = fmt.Sprintf("the command exited, but a process it started outside its group kept its output open past %s, so the reply may be cut short", lim.DrainDelay)
	case werr == nil:
		res.State = Completed
	default:
		res.State = Failed
		res.Reason = errs.last
		if res.Reason == "" {
			res.Reason = "the command " + describeExit(werr)
		}
	}
	return res
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return "ended abnormally: " + oneLine(err.Error())
}

// stdoutSink keeps stdout up to limit; past it, it says so (over) and
// reads the rest away.
type stdoutSink struct {
	limit    int64
	buf      bytes.Buffer
	n        int64
	overflow bool
	over     chan struct{}
}

func (s *stdoutSink) read(r io.Reader) {
	chunk := make([]byte, 32<<10)
	for {
		k, err := r.Read(chunk)
		if k > 0 {
			s.n += int64(k)
			room := s.limit - int64(s.buf.Len())
			if int64(k) <= room {
				s.buf.Write(chunk[:k])
			} else if !s.overflow {
				s.overflow = true
				close(s.over)
			}
		}
		if err != nil {
			return
		}
	}
}

// stderrSink passes stderr lines on as status updates, bounded, and keeps
// the last one for a failure's reason.
type stderrSink struct {
	lim      Limits
	onStatus func(string)
	lines    int
	last     string
}

func (s *stderrSink) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		frag, isPrefix, err := br.ReadLine()
		if len(line) < s.lim.LineBytes {
			line = append(line, frag[:min(len(frag), s.lim.LineBytes-len(line))]...)
		}
		if err != nil && len(line) == 0 {
			return
		}
		if isPrefix && err == nil {
			continue
		}
		s.line(string(line))
		line = line[:0]
		if err != nil {
			return
		}
	}
}

func (s *stderrSink) line(l string) {
	l = strings.TrimSpace(strings.ToValidUTF8(l, "\uFFFD"))
	if l == "" {
		return
	}
	s.lines++
	s.last = l
	if s.onStatus != nil && s.lines <= s.lim.StatusLines {
		s.onStatus(l)
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
