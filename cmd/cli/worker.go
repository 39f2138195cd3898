package cli

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/httplog"
	"github.com/a2a-courier/a2a-courier/store"
)

type workerOptions struct {
	stateDir string
	identity string
	linger   time.Duration
	rescan   time.Duration
	probe    string
	// credential is the descriptor (Unix) or handle (Windows) the
	// credential comes on: a number, never the credential.
	credential uint64
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
	cmd.Flags().Uint64Var(&opts.credential, courier.CredentialFlag, courier.DefaultCredentialHandle, "descriptor or inherited handle the credential comes on (set by the spawner on Windows)")
	return cmd
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
			err = configErr(config.DurationHint(v), "A2A_COURIER_WORKER_STALE_AFTER=%q is not a positive duration", v)
		}
	}
	beat := min(max(stale/10, 10*time.Millisecond), time.Second)
	return store.WorkerTiming{Beat: beat, StaleAfter: stale}, err
}

// runWorker is the worker a send-async (or a hand-off, or a revive)
// started: it takes its credential from descriptor 3 (Unix) or the
// inherited handle --credential-handle names (Windows), and serves the tasks
// of its identity (courier.Serve), logging to stderr, the worker log.
func (a *App) runWorker(ctx context.Context, opts *workerOptions) error {
	logger := log.New(a.p.Stderr, fmt.Sprintf("worker[%d] ", os.Getpid()), log.LstdFlags|log.Lmicroseconds|log.LUTC)
	if opts.probe != "" {
		return a.workerProbe(opts)
	}
	if opts.stateDir == "" || opts.identity == "" {
		return usageErr("the worker is started by a2a-courier itself", "worker needs --state-dir and --identity")
	}
	f := a.credentialFile(opts)
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
	timing, err := a.workerTiming()
	if err != nil {
		logger.Printf("%v; stale after %s", err, timing.StaleAfter)
	}
	// The requests of a task asked for with -v (Record.Verbose) go to the
	// log, marked with its contextId; no other request is shown.
	clients := a.httpClients()
	logged := func(t store.Target) (*http.Client, error) {
		hc, err := clients(t)
		if err != nil {
			return nil, err
		}
		return httplog.WrapMarked(hc, logger.Printf, a.p.Now), nil
	}
	c := newEngine(a.p, engineParts{store: st, clients: logged, timing: timing, logf: logger.Printf})
	c.Serve(ctx, opts.identity, key, opts.linger, opts.rescan)
	return nil
}

// workerProbe checks how this worker was started and reports it (doctor).
func (a *App) workerProbe(opts *workerOptions) error {
	if err := store.CheckContextID(opts.probe); err != nil || opts.stateDir == "" {
		return usageErr("the probe is started by a2a-courier doctor", "worker --probe needs a token and --state-dir")
	}
	st, err := store.Open(opts.stateDir)
	if err != nil {
		return err
	}
	c := newEngine(a.p, engineParts{store: st})
	return c.WriteProbe(opts.probe, a.credentialFile(opts))
}

// credentialFile is the inherited file the worker's credential comes on,
// nil when it was given none.
func (a *App) credentialFile(opts *workerOptions) *os.File {
	if opts.credential == 0 || uint64(uintptr(opts.credential)) != opts.credential {
		return nil
	}
	return a.p.ExtraFile(uintptr(opts.credential))
}
