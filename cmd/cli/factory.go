package cli

import (
	"context"
	"net/http"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
	"github.com/spf13/cobra"
)

// Factory is what a command is built from, in the manner of gh's
// cmdutil.Factory: fields, and no behaviour of its own. A command's
// Options take from it what the command uses, and nothing else; a test
// builds the command with a Factory of its own and a runF that receives
// the Options as parsed (flags and arguments), with no server and no
// state directory. See CONTRIBUTING.md.
//
// Each func is lazy, and built once per command line: the first call
// does the work (reading the config file, opening the state directory),
// the later ones return what it made.
type Factory struct {
	// Process is the process the command runs in: arguments, streams,
	// environment, clock (the IO streams and what a test replaces).
	Process *Process
	// Printer writes the command's output: the result on stdout, the rest
	// on stderr, one JSON document with --json.
	Printer func() *printer
	// ConfigPath is the config file's path ("" without a config
	// directory); Flags are the root's flags as parsed (--profile, the
	// connection flags).
	ConfigPath func() string
	Flags      func() config.Flags
	// Settings resolves the effective settings (flag > environment >
	// config file > default), not requiring a Kibana.
	Settings func() (*config.Settings, error)
	// KibanaSettings is Settings requiring a Kibana URL and an API key.
	KibanaSettings func() (*config.Settings, error)
	// Kibana is the Agent Builder client for settings.
	Kibana func(*config.Settings) (*client.Kibana, error)
	// Engine is the task engine on the state directory (newEngine: the
	// one way an engine is built).
	Engine func() (*courier.Courier, error)
	// Store opens the state directory (making it when missing).
	Store func() (*store.Store, error)
	// Caches is the engine for what needs no record (cards, clients).
	Caches func() *courier.Courier
	// HTTPClients are the process's HTTP clients, one per TLS setting
	// (with -v, each logs its requests).
	HTTPClients func() func(store.Target) (*http.Client, error)
	// ResolveTarget finds the agent a command names (an Agent Builder
	// agent, a peer of the config file, --url) and reads its card.
	ResolveTarget func(ctx context.Context, name string, af agentFlags) (*target, error)
	// Caller is what the steps a command prints keep of the caller's
	// command line (nextstep.Caller).
	Caller func() nextstep.Caller

	// i22-cmds: the shared helpers show, cancel, mcp, skill and config
	// reach, each today's App method.
	//
	// KibanaForRecord is the Agent Builder client that reads a recorded
	// task's conversation, the space it reads, and whether that is the
	// task's Kibana (App.kibanaForRecord).
	KibanaForRecord func(*store.Record) (k *client.Kibana, space string, sameKibana bool, err error)
	// RecordSettings are the settings that reach a recorded task's Kibana
	// (App.recordSettings); RecordCredential the credential that reaches
	// its server (App.recordCredential).
	RecordSettings   func(*store.Record) (*config.Settings, error)
	RecordCredential func(*store.Record) (client.Secret, error)
	// RecordNote is the note of the recorded task the command reads with
	// the profile it was sent with, or "" (App.recordNotes).
	RecordNote func() string
	// ReportCanceled prints the outcome of a cancel (App.reportCanceled).
	ReportCanceled func(rec *store.Record, st *store.Store) error
	// GroupRun is the run of a command that only groups others (groupRun).
	GroupRun func(*cobra.Command, []string) error
}

// factory is the Factory of the command line a runs.
func (a *App) factory() *Factory {
	f := &Factory{Process: a.p, Printer: a.printer, ConfigPath: a.configPath, Flags: func() config.Flags { return a.flags }, Settings: a.loadSettings, KibanaSettings: a.kibanaSettings,
		Kibana: a.kibana, Engine: a.engine, Store: a.openStore, Caches: a.caches, HTTPClients: a.httpClients, ResolveTarget: a.resolveTarget, Caller: a.caller}
	// i22-cmds
	f.KibanaForRecord, f.RecordSettings, f.RecordCredential, f.ReportCanceled = a.kibanaForRecord, a.recordSettings, a.recordCredential, a.reportCanceled
	f.RecordNote = func() string {
		for _, n := range a.recordNotes {
			return n
		}
		return ""
	}
	f.GroupRun = groupRun(a)
	return f
}

// engineParts are what an engine is built of: its state directory (nil:
// an engine for what needs no record), its HTTP clients, the worker
// timing of the environment (and the error of a value that is not a
// duration), and its log (a worker's).
type engineParts struct {
	store     *store.Store
	clients   func(store.Target) (*http.Client, error)
	timing    store.WorkerTiming
	timingErr error
	logf      func(format string, args ...any)
}

// newEngine is the one way the task engine is built, for a command
// (App.engine), for what needs no record (App.caches) and for a detached
// worker (runWorker): the process's clock, executable and environment
// (for the workers it spawns), with parts.
func newEngine(p *Process, parts engineParts) *courier.Courier {
	return &courier.Courier{Store: parts.store, HTTPClient: parts.clients, Now: p.Now, UserAgent: userAgent(),
		Executable: p.Executable, Environ: p.Environ, Timing: parts.timing, TimingErr: parts.timingErr, Logf: parts.logf}
}
