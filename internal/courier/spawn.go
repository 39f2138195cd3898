package courier

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// CredentialFlag is the worker's flag that names the descriptor (Unix) or
// handle (Windows) its credential comes on: a number, never the credential.
// On Unix it is not given, and the credential is on descriptor
// DefaultCredentialHandle (3); on Windows spawn passes the handle's value,
// which an inherited handle keeps in the child.
const CredentialFlag = "credential-handle"

// maxCredential bounds what a worker reads from its credential pipe.
const maxCredential = 64 << 10

// ReadCredential reads the credential a spawned worker was handed on its
// descriptor or handle (f), once, and closes it. It is empty for agents
// that need none.
func ReadCredential(f *os.File) (client.Secret, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxCredential))
	f.Close()
	if err != nil {
		return "", fmt.Errorf("read credential: %w", err)
	}
	return client.Secret(strings.TrimSpace(string(b))), nil
}

// spawnWorker starts a detached worker for an identity: the same binary, in
// a session of its own (Unix) or detached from the caller's console, process
// group and job (Windows), stdin from the null device, output to the worker
// log, and the credential through an inherited pipe.
func (c *Courier) spawnWorker(ident string, key client.Secret) error {
	return c.spawn([]string{"worker", "--state-dir", c.Store.Dir(), "--identity", ident}, key)
}

func (c *Courier) spawn(args []string, key client.Secret) error {
	exe, err := c.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := c.Store.OpenLog()
	if err != nil {
		return fmt.Errorf("open worker log: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	env := workerEnv(c.Environ())
	command := func(extra ...string) *exec.Cmd {
		cmd := exec.Command(exe, append(slices.Clip(args), extra...)...)
		cmd.Stdin = devnull
		cmd.Stdout = logf
		cmd.Stderr = logf
		cmd.Env = env
		return cmd
	}
	cmd, note, err := startDetached(command, pr)
	if err != nil {
		pw.Close()
		return fmt.Errorf("start worker: %w", err)
	}
	// The worker log names each worker as it starts, and who started it:
	// the worker's own lines carry its pid only once it serves.
	fmt.Fprintf(logf, "%s spawn[%d] started worker %d%s\n", c.now().UTC().Format(spawnTimeFormat), os.Getpid(), cmd.Process.Pid, note)
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

// spawnTimeFormat is the time of a spawn line in the worker log, as the
// worker's own lines have it (log.LstdFlags|log.Lmicroseconds, UTC).
const spawnTimeFormat = "2006/01/02 15:04:05.000000"

// workerEnv is the environment a worker inherits: an allowlist, so no
// secret of the caller's environment reaches a long-lived process.
func workerEnv(env []string) []string {
	out := make([]string, 0, 16)
	for _, kv := range env {
		raw, _, _ := strings.Cut(kv, "=")
		// name as this system compares names: on Windows without case.
		name, upper := envName(raw), strings.ToUpper(raw)
		switch {
		case name == "A2A_COURIER_TOKEN", secretName(upper) && name != "A2A_COURIER_TOKEN_ORIGIN":
			// The worker's credential comes on its own pipe; whatever else
			// is named like a secret stays behind.
		case strings.HasPrefix(name, "A2A_COURIER_"),
			name == "PATH", name == "HOME", name == "USER", name == "LOGNAME", name == "LANG", strings.HasPrefix(name, "LC_"),
			name == "TZ", name == "TMPDIR", strings.HasPrefix(name, "XDG_"),
			upper == "HTTP_PROXY", upper == "HTTPS_PROXY", upper == "NO_PROXY", upper == "ALL_PROXY",
			name == "SSL_CERT_FILE", name == "SSL_CERT_DIR", name == "GODEBUG", name == "GOCOVERDIR",
			name == "GOGC", name == "GOMEMLIMIT", // the worker's GC, as the user tunes it
			platformVar(upper):
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

// ensureWorker makes sure a worker serves ident. A running worker picks a
// new record up by itself; if it is on its way out, it looks once more
// after releasing its lock, so a record written before this check is never
// left behind. A worker that holds its lock but has stopped beating
// (SIGSTOP) serves nothing: a new one is started beside it, in the next
// worker slot, and takes every task whose lock is free.
func (c *Courier) ensureWorker(ident string, key client.Secret) error {
	if c.TimingErr != nil {
		return c.TimingErr
	}
	workers := c.Store.Workers(ident)
	var pids []string
	for _, w := range workers {
		if !w.Stale(c.now(), c.Timing.StaleAfter) {
			return nil
		}
		pids = append(pids, strconv.Itoa(w.PID))
	}
	if len(workers) >= store.MaxWorkerSlots {
		return fmt.Errorf("%d workers of this credential hold their locks but stopped responding (pids %s): continue them (%s) or end them (%s)",
			len(workers), strings.Join(pids, ", "), ContinueWorker(0), EndWorker(0))
	}
	return c.spawnWorker(ident, key)
}

// StalledHolder returns the worker that holds a task's lock when it has
// stopped beating: alive, since the kernel keeps its lock, but not
// working. The task stays with it, since it may go on (SIGCONT).
func (c *Courier) StalledHolder(rec *store.Record) (store.WorkerInfo, bool) {
	if rec.State.Terminal() || !c.Store.Locked(rec.ContextID) {
		return store.WorkerInfo{}, false
	}
	pid := c.Store.LockHolder(rec.ContextID)
	if pid == 0 {
		return store.WorkerInfo{}, false
	}
	for _, w := range c.Store.Workers(rec.Identity) {
		if w.PID == pid {
			return w, w.Stale(c.now(), c.Timing.StaleAfter)
		}
	}
	return store.WorkerInfo{}, false
}
