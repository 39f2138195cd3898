package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// workerCredentialFD is the descriptor on which a spawned worker receives
// its credential: never argv, never a file.
const workerCredentialFD = 3

type workerOptions struct {
	stateDir string
	identity string
	linger   time.Duration
	rescan   time.Duration
	probe    string
}

func newWorkerCmd(app *App) *cobra.Command {
	opts := &workerOptions{}
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Run the detached worker (started by a2a-courier itself)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return app.runWorker(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.stateDir, "state-dir", "", "state directory")
	cmd.Flags().StringVar(&opts.identity, "identity", "", "credential fingerprint this worker serves")
	cmd.Flags().DurationVar(&opts.linger, "linger", 2*time.Second, "how long an idle worker waits for new tasks before it exits")
	cmd.Flags().DurationVar(&opts.rescan, "rescan", time.Second, "how often the worker looks for tasks it was not told about")
	cmd.Flags().StringVar(&opts.probe, "probe", "", "report how it was started to workers/probe-<token> and exit (used by doctor)")
	return cmd
}

// spawnWorker starts a detached worker for an identity: the same binary, in
// its own session, stdin from /dev/null, output to the worker log, and the
// credential through an inherited pipe.
func (a *App) spawnWorker(st *store.Store, ident string, key client.Secret) error {
	return a.spawn(st, []string{"worker", "--state-dir", st.Dir(), "--identity", ident}, key)
}

func (a *App) spawn(st *store.Store, args []string, key client.Secret) error {
	exe, err := a.p.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := st.OpenLog()
	if err != nil {
		return fmt.Errorf("open worker log: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin = devnull
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.ExtraFiles = []*os.File{pr}
	cmd.Env = workerEnv(a.p.Environ())
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	markInheritedCloseOnExec()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("start worker: %w", err)
	}
	// The credential is small, so the pipe buffer takes it without waiting
	// for the worker to read.
	_, werr := io.WriteString(pw, key.Reveal()+"\n")
	pw.Close()
	go cmd.Wait() // reap it if this process lives on (the demo, tests)
	if werr != nil {
		return fmt.Errorf("hand the credential to the worker: %w", werr)
	}
	return nil
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

// workerEnv is the environment a worker inherits: an allowlist, so no
// secret of the caller's environment reaches a long-lived process.
func workerEnv(env []string) []string {
	out := make([]string, 0, 16)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		switch {
		case name == "A2A_COURIER_TOKEN", secretName(upper) && name != "A2A_COURIER_TOKEN_ORIGIN":
			// The worker's credential comes on descriptor 3; whatever else
			// is named like a secret stays behind.
		case strings.HasPrefix(name, "A2A_COURIER_"),
			name == "PATH", name == "HOME", name == "USER", name == "LOGNAME", name == "LANG", strings.HasPrefix(name, "LC_"),
			name == "TZ", name == "TMPDIR", strings.HasPrefix(name, "XDG_"),
			upper == "HTTP_PROXY", upper == "HTTPS_PROXY", upper == "NO_PROXY", upper == "ALL_PROXY",
			name == "SSL_CERT_FILE", name == "SSL_CERT_DIR", name == "GODEBUG", name == "GOCOVERDIR":
			out = append(out, kv)
		}
	}
	return out
}

// secretName reports whether an environment variable's name says it holds
// a secret.
func secretName(upper string) bool {
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"} {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// defaultWorkerStaleAfter is how long a worker may be silent before it
// counts as stopped: ten of its beats (workerTiming).
const defaultWorkerStaleAfter = 10 * time.Second

// workerTiming is how often a worker beats its lock and how long a silence
// means it has stopped: A2A_COURIER_WORKER_STALE_AFTER (default 10s), and
// ten beats in that time, one a second at most.
func (a *App) workerTiming() (store.WorkerTiming, error) {
	stale := defaultWorkerStaleAfter
	var err error
	if v := a.p.getenv("A2A_COURIER_WORKER_STALE_AFTER"); v != "" {
		if d, perr := time.ParseDuration(v); perr == nil && d > 0 {
			stale = d
		} else {
			err = configErr("use a Go duration such as 10s", "A2A_COURIER_WORKER_STALE_AFTER=%q is not a positive duration", v)
		}
	}
	beat := min(max(stale/10, 10*time.Millisecond), time.Second)
	return store.WorkerTiming{Beat: beat, StaleAfter: stale}, err
}

// ensureWorker makes sure a worker serves ident. A running worker picks a
// new record up by itself; if it is on its way out, it looks once more
// after releasing its lock, so a record written before this check is never
// left behind. A worker that holds its lock but has stopped beating
// (SIGSTOP) serves nothing: a new one is started beside it, in the next
// worker slot, and takes every task whose lock is free.
func (a *App) ensureWorker(st *store.Store, ident string, key client.Secret) error {
	timing, err := a.workerTiming()
	if err != nil {
		return err
	}
	workers := st.Workers(ident)
	var pids []string
	for _, w := range workers {
		if !w.Stale(a.p.Now(), timing.StaleAfter) {
			return nil
		}
		pids = append(pids, strconv.Itoa(w.PID))
	}
	if len(workers) >= store.MaxWorkerSlots {
		return fmt.Errorf("%d workers of this credential hold their locks but stopped responding (pids %s): continue them (kill -CONT) or end them (kill)",
			len(workers), strings.Join(pids, ", "))
	}
	return a.spawnWorker(st, ident, key)
}

// stalledHolder returns the worker that holds a task's lock when it has
// stopped beating: alive, since the kernel keeps its lock, but not
// working. The task stays with it, since it may go on (SIGCONT).
func (a *App) stalledHolder(st *store.Store, rec *store.Record) (store.WorkerInfo, bool) {
	if rec.State.Terminal() || !st.Locked(rec.ContextID) {
		return store.WorkerInfo{}, false
	}
	pid := st.LockHolder(rec.ContextID)
	if pid == 0 {
		return store.WorkerInfo{}, false
	}
	timing, _ := a.workerTiming()
	for _, w := range st.Workers(rec.Identity) {
		if w.PID == pid {
			return w, w.Stale(a.p.Now(), timing.StaleAfter)
		}
	}
	return store.WorkerInfo{}, false
}

// stalledText says that a task is held by a worker that stopped beating.
func (a *App) stalledText(rec *store.Record, w store.WorkerInfo) string {
	sent := "nothing has run yet"
	if rec.State != store.Queued {
		sent = "the message was sent, and is never sent again"
	}
	ago := a.p.Now().Sub(w.LastBeat).Round(time.Second)
	return fmt.Sprintf("task %s is held by worker %d, which stopped responding: its last heartbeat was %s ago (state %s; %s)",
		rec.ContextID, w.PID, ago, rec.State, sent)
}

// reportStalled reports a task whose worker stopped beating, instead of
// "still running, nothing is lost": nobody works on it until that worker
// goes on or ends. Exit 8, as for any task not final.
func (a *App) reportStalled(rec *store.Record, w store.WorkerInfo) error {
	pr := a.printer()
	doc := recordDoc(rec)
	doc.Note = a.stalledText(rec, w)
	if pr.json {
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(ExitStillRunning)
	}
	pr.warn("%s", doc.Note)
	pr.info("it goes on if the worker is continued (kill -CONT %d); ended (kill %d), it frees the task for a new worker: %s", w.PID, w.PID, doc.Resume)
	return exitWith(ExitStillRunning)
}

func (a *App) runWorker(ctx context.Context, opts *workerOptions) error {
	logger := log.New(a.p.Stderr, fmt.Sprintf("worker[%d] ", os.Getpid()), log.LstdFlags|log.Lmicroseconds|log.LUTC)
	if opts.probe != "" {
		return a.workerProbe(opts)
	}
	if opts.stateDir == "" || opts.identity == "" {
		return usageErr("the worker is started by a2a-courier itself", "worker needs --state-dir and --identity")
	}
	f := a.p.ExtraFile(workerCredentialFD)
	if f == nil {
		return usageErr("the worker is started by a2a-courier itself", "worker needs its credential on descriptor 3")
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	f.Close()
	if err != nil {
		return fmt.Errorf("read credential: %w", err)
	}
	// Empty for agents that need no credential.
	key := client.Secret(strings.TrimSpace(string(b)))
	st, err := store.Open(opts.stateDir)
	if err != nil {
		return err
	}
	timing, err := a.workerTiming()
	if err != nil {
		logger.Printf("%v; stale after %s", err, timing.StaleAfter)
	}
	wl, err := st.AcquireWorker(opts.identity, timing)
	if errors.Is(err, store.ErrLocked) {
		logger.Printf("another worker serves %s; exiting", opts.identity)
		return nil
	}
	if err != nil {
		logger.Printf("%v; exiting", err)
		return nil
	}
	if wl.Slot() > 0 {
		logger.Printf("the worker(s) before slot %d of %s stopped responding; their tasks stay with them", wl.Slot(), opts.identity)
	}
	w := &worker{
		st: st, ident: opts.identity, logger: logger, lock: wl, timing: timing,
		runner: &taskRunner{command: "worker", st: st, key: key, clients: a.httpClients(), now: a.p.Now, logf: logger.Printf},
		active: map[string]context.CancelCauseFunc{}, skip: map[string]time.Time{}, done: make(chan taskEnd, 16),
		linger: opts.linger, rescan: opts.rescan,
	}
	logger.Printf("serving %s from %s", opts.identity, st.Dir())
	w.loop(ctx)
	logger.Printf("exiting")
	return nil
}

// worker serves every task of one identity in one process: a hundred
// pending tasks cost one process, not a hundred.
type worker struct {
	st     *store.Store
	ident  string
	logger *log.Logger
	lock   *store.WorkerLock
	timing store.WorkerTiming
	runner *taskRunner
	linger time.Duration
	rescan time.Duration

	wg     sync.WaitGroup
	active map[string]context.CancelCauseFunc
	// skip holds records not to look at again while their file is
	// unchanged (terminal, another identity's, damaged, stopped on an
	// error), with the file's modification time: a record replaced under
	// the same contextId (a follow-up) is looked at afresh.
	skip map[string]time.Time
	done chan taskEnd
	// closing is set once another worker took over: finish, claim nothing.
	closing bool
}

func (w *worker) loop(ctx context.Context) {
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	if watcher, err := fsnotify.NewWatcher(); err == nil {
		defer watcher.Close()
		if err := watcher.Add(w.st.TasksDir()); err == nil {
			events, watchErrs = watcher.Events, watcher.Errors
		}
	}
	rescan := time.NewTicker(w.rescan)
	defer rescan.Stop()
	linger := time.NewTimer(w.linger)
	defer linger.Stop()
	w.claimAll(ctx)
	for {
		select {
		case <-ctx.Done():
			w.logger.Printf("stopping (%v); tasks keep their state for the next worker", context.Cause(ctx))
			w.wg.Wait()
			w.lock.Release()
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			name := filepath.Base(ev.Name)
			if strings.HasPrefix(name, ".") || ev.Op&(fsnotify.Create|fsnotify.Rename|fsnotify.Write) == 0 {
				continue
			}
			if id, ok := strings.CutSuffix(name, ".json"); ok {
				delete(w.skip, id)
				w.claim(ctx, id)
			} else if id, ok := strings.CutSuffix(name, ".cancel"); ok {
				w.cancelIfAsked(id)
			}
		case err, ok := <-watchErrs:
			// An overflow loses events: the rescan catches up.
			if !ok {
				watchErrs = nil
			} else {
				w.logger.Printf("watching tasks: %v", err)
			}
		case <-rescan.C:
			w.claimAll(ctx)
			for id := range w.active {
				w.cancelIfAsked(id)
			}
		case end := <-w.done:
			delete(w.active, end.id)
			if end.stopped {
				// It stopped on an error (reading refused): not again until
				// its record changes.
				w.skipNow(end.id)
			}
			if len(w.active) == 0 {
				linger.Reset(w.linger)
			}
		case <-linger.C:
			if len(w.active) > 0 {
				continue
			}
			if w.closing {
				w.wg.Wait()
				return
			}
			// Release first, then look once more: a process that found
			// the lock held wrote its record before looking, so this scan
			// sees it; one that finds the lock free starts a new worker.
			w.lock.Release()
			w.claimAll(ctx)
			if len(w.active) == 0 {
				return
			}
			l, err := w.st.AcquireWorker(w.ident, w.timing)
			if err != nil {
				w.closing = true
				w.logger.Printf("another worker took over; finishing %d task(s)", len(w.active))
				continue
			}
			w.lock = l
		}
	}
}

func (w *worker) claimAll(ctx context.Context) {
	if w.closing {
		return
	}
	entries, err := os.ReadDir(w.st.TasksDir())
	if err != nil {
		w.logger.Printf("read tasks: %v", err)
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") {
			w.claim(ctx, strings.TrimSuffix(name, ".json"))
		}
	}
}

// recordMtime returns the modification time of a task's record file.
func (w *worker) recordMtime(id string) (time.Time, bool) {
	fi, err := os.Stat(filepath.Join(w.st.TasksDir(), id+".json"))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

func (w *worker) skipNow(id string) {
	if mt, ok := w.recordMtime(id); ok {
		w.skip[id] = mt
	}
}

func (w *worker) claim(ctx context.Context, id string) {
	if w.closing || w.active[id] != nil {
		return
	}
	if mt, ok := w.skip[id]; ok {
		if cur, exists := w.recordMtime(id); !exists || cur.Equal(mt) {
			return
		}
		delete(w.skip, id)
	}
	rec, err := w.st.Load(id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			w.logger.Printf("%v", err)
			w.skipNow(id)
		}
		return
	}
	if rec.Identity != w.ident || rec.State.Terminal() {
		w.skipNow(id)
		return
	}
	h, err := w.st.Lock(id)
	if err != nil {
		return // a foreground send or another worker has it
	}
	tctx, cancel := context.WithCancelCause(ctx)
	w.active[id] = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer h.Release()
		defer cancel(nil)
		_, err := w.runner.run(tctx, h)
		stopped := err != nil && !errors.Is(err, errHandedOff)
		if stopped {
			w.logger.Printf("%s: %v", id, err)
		}
		select {
		case w.done <- taskEnd{id: id, stopped: stopped}:
		case <-ctx.Done():
		}
	}()
}

// cancelIfAsked stops an active task whose cancel was requested; the
// runner then marks it canceled.
func (w *worker) cancelIfAsked(id string) {
	cancel := w.active[id]
	if cancel == nil {
		return
	}
	if rec, err := w.st.Load(id); err == nil && w.st.CancelRequested(id, rec.MessageID) {
		w.logger.Printf("%s: cancel requested", id)
		cancel(errCancelRequested)
	}
}

type taskEnd struct {
	id      string
	stopped bool
}

// probeReport is what a probe worker writes for doctor.
type probeReport struct {
	PID           int  `json:"pid"`
	SessionLeader bool `json:"session_leader"`
	StdinDevNull  bool `json:"stdin_devnull"`
	Credential    bool `json:"credential"`
}

// workerProbe checks how this worker was started and reports it.
func (a *App) workerProbe(opts *workerOptions) error {
	if err := store.CheckContextID(opts.probe); err != nil || opts.stateDir == "" {
		return usageErr("the probe is started by a2a-courier doctor", "worker --probe needs a token and --state-dir")
	}
	st, err := store.Open(opts.stateDir)
	if err != nil {
		return err
	}
	rep := probeReport{PID: os.Getpid()}
	if sid, err := unix.Getsid(0); err == nil {
		rep.SessionLeader = sid == os.Getpid()
	}
	if fi, err := os.Stdin.Stat(); err == nil {
		if dn, err := os.Stat(os.DevNull); err == nil {
			rep.StdinDevNull = os.SameFile(fi, dn)
		}
	}
	if f := a.p.ExtraFile(workerCredentialFD); f != nil {
		b, err := io.ReadAll(io.LimitReader(f, 64<<10))
		rep.Credential = err == nil && strings.TrimSpace(string(b)) != ""
		f.Close()
	}
	b, _ := json.Marshal(rep)
	return store.WriteFileAtomic(filepath.Join(st.Dir(), "workers"), "probe-"+opts.probe+".json", b)
}
