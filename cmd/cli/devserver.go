package cli

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/doctor"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/simulator"
)

// devServerOptions are dev-server's dependencies (the process whose
// simulator it runs) and flags; changed holds the names of the flags
// given (the simulator's configuration takes those, over --config's).
type devServerOptions struct {
	Process *Process
	Printer func() *printer

	changed       map[string]bool
	addr          string
	config        string
	version       string
	dataFile      string
	proxyCut      time.Duration
	idleClose     time.Duration
	responseDelay time.Duration
	extraRunTime  time.Duration
	failRuns      int
	precreate     bool
	verbose       bool
	streaming     bool
}

// newCmdDevServer builds dev-server; runF, when not nil, runs in place of
// devServerRun (a test's, which gets the options as parsed).
func newCmdDevServer(f *Factory, runF func(context.Context, *devServerOptions) error) *cobra.Command {
	opts := &devServerOptions{Process: f.Process, Printer: f.Printer}
	cmd := &cobra.Command{
		Use:   "dev-server",
		Short: "Run the built-in Kibana Agent Builder simulator",
		Long: `Run the Kibana Agent Builder simulator on a local address, for trying
a2a-courier and for testing scripts and other tools against it.

It reproduces Agent Builder's A2A endpoint, agent cards, agent list and
conversation store as Kibana 9.2 to 9.6 behave (docs/simulator.md), with the
faults seen in the field: a proxy that answers 502 (the run goes on up to
9.5; 9.6 and serverless abort a blocking run whose connection ends),
Kibana's idle close, slow responses, failing and slow rounds.

Without --config it serves the demo agents (elastic-ai-agent, audit-agent,
flaky-agent) and accepts the demo API key. stdout carries the settings to
export; with --json, {"url","api_key","version"}. It runs until interrupted.

Test hooks outside Kibana's API: GET /__sim/runs[?context_id=] counts runs,
GET and PUT /__sim/faults read and replace the faults (JSON).

The simulator is test code, which the release build (go build, go
install) leaves out: build it in with -tags simulator.`,
		Example: `  a2a-courier dev-server --addr 127.0.0.1:5601
  a2a-courier dev-server --proxy-cut-after 30s --version 9.2
  a2a-courier dev-server --config sim.yaml --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.changed = map[string]bool{}
			cmd.Flags().Visit(func(fl *pflag.Flag) { opts.changed[fl.Name] = true })
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return devServerRun(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.addr, "addr", "127.0.0.1:5601", "address to listen on")
	fs.StringVar(&opts.config, "config", "", "YAML file with version, agents, keys and faults (see docs/simulator.md)")
	fs.StringVar(&opts.version, "version", "", "Kibana version to imitate: 9.2 to 9.6, or serverless (default 9.5)")
	fs.StringVar(&opts.dataFile, "data-file", "", "keep conversations and run counts in this file across restarts")
	fs.DurationVar(&opts.proxyCut, "proxy-cut-after", 0, "answer a run still going after this long with a proxy's 502 (the run goes on up to 9.5; 9.6 aborts it)")
	fs.DurationVar(&opts.idleClose, "idle-close-after", 0, "drop the connection of a run still going after this long (Kibana's idle timeout)")
	fs.DurationVar(&opts.responseDelay, "response-delay", 0, "delay every response by this long")
	fs.DurationVar(&opts.extraRunTime, "extra-run-time", 0, "add this to every run")
	fs.IntVar(&opts.failRuns, "fail-runs", 0, "make the next N runs fail")
	fs.BoolVar(&opts.precreate, "precreate-empty", false, "create an empty conversation before each first run (a variant of Kibana's)")
	fs.BoolVarP(&opts.verbose, "verbose", "v", false, "log every request and run on stderr")
	fs.BoolVar(&opts.streaming, "streaming", false, "offer message/stream over SSE (card capabilities.streaming: true), as Kibana's newest code can")
	return cmd
}

func devServerRun(ctx context.Context, opts *devServerOptions) error {
	if opts.Process.Simulator == nil {
		return noSimulator("dev-server")
	}
	cfg, err := devServerConfig(opts)
	if err != nil {
		return err
	}
	pr := opts.Printer()
	if opts.verbose {
		cfg.Logf = func(format string, args ...any) { pr.logf("sim: "+format, args...) }
	}
	srv, err := opts.Process.Simulator(opts.addr, cfg)
	var cerr *simulator.ConfigError
	var lerr *simulator.ListenError
	switch {
	case errors.As(err, &lerr):
		return usageErr("choose another --addr", "cannot listen on %s: %v", opts.addr, lerr.Err)
	case errors.As(err, &cerr) && cerr.Format:
		return usageErr("see docs/simulator.md for the format", "%v", cerr.Err)
	case errors.As(err, &cerr):
		return usageErr("see docs/simulator.md", "%v", cerr.Err)
	case err != nil:
		return err
	}
	if host, _, err := net.SplitHostPort(srv.Addr()); err == nil && !doctor.IsLoopback(host) {
		pr.warn("listening on %s, beyond loopback: the test routes /__sim/* have no authentication", srv.Addr())
	}
	key := srv.APIKey()
	if key == "" {
		pr.warn("no keys configured: every request will get 401 (add keys: to the config file)")
	}
	if pr.json {
		pr.writeJSON(map[string]string{"url": srv.URL(), "api_key": key, "version": srv.Version()})
	} else {
		pr.payload(shellcmd.EnvSet("KIBANA_URL", srv.URL()) + "\n" + shellcmd.EnvSet("KIBANA_API_KEY", key))
		pr.info("Agent Builder simulator (Kibana %s) on %s, %d agent(s); Ctrl-C stops it", srv.Version(), srv.URL(), srv.Agents())
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}

// devServerConfig is the simulator's configuration: the --config file, and
// the flags given.
func devServerConfig(opts *devServerOptions) (simulator.Config, error) {
	var cfg simulator.Config
	if opts.config != "" {
		b, _, err := boundedfile.Read(opts.config, config.MaxFileBytes)
		if err != nil {
			if ce := config.UnreadableFileError("simulator config", err, "pass a regular YAML file of a few KB"); ce != nil {
				return cfg, ce
			}
			return cfg, usageErr("pass a readable YAML file", "%v", err)
		}
		cfg.YAML = b
	}
	set := func(name string) bool { return opts.changed[name] }
	if set("version") {
		cfg.Version = &opts.version
	}
	if set("data-file") {
		cfg.DataFile = &opts.dataFile
	}
	if set("precreate-empty") {
		cfg.PrecreateEmpty = &opts.precreate
	}
	if set("streaming") {
		cfg.Streaming = &opts.streaming
	}
	for _, d := range []struct {
		name string
		from *time.Duration
		to   **time.Duration
	}{
		{"proxy-cut-after", &opts.proxyCut, &cfg.ProxyCutAfter}, {"idle-close-after", &opts.idleClose, &cfg.IdleCloseAfter},
		{"response-delay", &opts.responseDelay, &cfg.ResponseDelay}, {"extra-run-time", &opts.extraRunTime, &cfg.ExtraRunTime},
	} {
		if set(d.name) {
			*d.to = d.from
		}
	}
	if set("fail-runs") {
		cfg.FailRuns = &opts.failRuns
	}
	return cfg, nil
}

// noSimulator is the answer of demo and dev-server in a release build: the
// simulator is test code, and the binary users install does not carry it.
func noSimulator(command string) error {
	return usageErr("build it in: go run -tags simulator github.com/a2a-courier/a2a-courier/cmd/a2a-courier@latest "+command+
		" (or, in a checkout, go run -tags simulator ./cmd/a2a-courier "+command+")",
		"%s runs the built-in Agent Builder simulator, which this build of a2a-courier leaves out (a release build)", command)
}
