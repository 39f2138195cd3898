package cli

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/httplog"
	"github.com/a2a-courier/a2a-courier/store"
)

// workerOptions are the worker's dependencies and flags.
type workerOptions struct {
	Process      *Process
	HTTPClients  func() func(store.Target) (*http.Client, error)
	WorkerTiming func() (store.WorkerTiming, error)

	stateDir string
	identity string
	linger   time.Duration
	rescan   time.Duration
	probe    string
	// credential is the descriptor (Unix) or handle (Windows) the
	// credential comes on: a number, never the credential.
	credential uint64
}

// newCmdWorker builds worker; runF, when not nil, runs in place of
// workerRun (a test's, which gets the options as parsed).
func newCmdWorker(f *Factory, runF func(context.Context, *workerOptions) error) *cobra.Command {
	opts := &workerOptions{Process: f.Process, HTTPClients: f.HTTPClients, WorkerTiming: f.WorkerTiming}
	cmd := &cobra.Command{
		Use:    "worker",
		Short:  "Run the detached worker (started by a2a-courier itself)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return workerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.stateDir, "state-dir", "", "state directory")
	cmd.Flags().StringVar(&opts.identity, "identity", "", "credential fingerprint this worker serves")
	cmd.Flags().DurationVar(&opts.linger, "linger", 2*time.Second, "how long an idle worker waits for new tasks before it exits")
	cmd.Flags().DurationVar(&opts.rescan, "rescan", time.Second, "how often the worker looks for tasks it was not told about")
	cmd.Flags().StringVar(&opts.probe, "probe", "", "report how it was started to workers/probe-<token> and exit (used by doctor)")
	cmd.Flags().Uint64Var(&opts.credential, courier.CredentialFlag, courier.DefaultCredentialHandle, "descriptor or inherited handle the credential comes on (set by the spawner on Windows)")
	return cmd
}

// workerRun is the worker a send-async (or a hand-off, or a revive)
// started: it takes its credential from descriptor 3 (Unix) or the
// inherited handle --credential-handle names (Windows), and serves the tasks
// of its identity (courier.Serve), logging to stderr, the worker log.
func workerRun(ctx context.Context, opts *workerOptions) error {
	p := opts.Process
	logger := log.New(p.Stderr, fmt.Sprintf("worker[%d] ", os.Getpid()), log.LstdFlags|log.Lmicroseconds|log.LUTC)
	if opts.probe != "" {
		return opts.probeRun()
	}
	if opts.stateDir == "" || opts.identity == "" {
		return usageErr("the worker is started by a2a-courier itself", "worker needs --state-dir and --identity")
	}
	f := opts.credentialFile()
	if f == nil {
		return usageErr("the worker is started by a2a-courier itself", "worker needs its credential on "+courier.CredentialWhere)
	}
	key, err := courier.ReadCredential(f)
	if err != nil {
		return err
	}
	st, err := store.Open(opts.stateDir)
	if err != nil {
		return err
	}
	timing, err := opts.WorkerTiming()
	if err != nil {
		logger.Printf("%v; stale after %s", err, timing.StaleAfter)
	}
	// The requests of a task asked for with -v (Record.Verbose) go to the
	// log, marked with its contextId; no other request is shown.
	clients := opts.HTTPClients()
	logged := func(t store.Target) (*http.Client, error) {
		hc, err := clients(t)
		if err != nil {
			return nil, err
		}
		return httplog.WrapMarked(hc, logger.Printf, p.Now), nil
	}
	c := newEngine(p, engineParts{store: st, clients: logged, timing: timing, logf: logger.Printf})
	c.Serve(ctx, opts.identity, key, opts.linger, opts.rescan)
	return nil
}

// probeRun checks how this worker was started and reports it (doctor).
func (opts *workerOptions) probeRun() error {
	if err := store.CheckContextID(opts.probe); err != nil || opts.stateDir == "" {
		return usageErr("the probe is started by a2a-courier doctor", "worker --probe needs a token and --state-dir")
	}
	st, err := store.Open(opts.stateDir)
	if err != nil {
		return err
	}
	c := newEngine(opts.Process, engineParts{store: st})
	return c.WriteProbe(opts.probe, opts.credentialFile())
}

// credentialFile is the inherited file the worker's credential comes on,
// nil when it was given none.
func (opts *workerOptions) credentialFile() *os.File {
	if opts.credential == 0 || uint64(uintptr(opts.credential)) != opts.credential {
		return nil
	}
	return opts.Process.ExtraFile(uintptr(opts.credential))
}
