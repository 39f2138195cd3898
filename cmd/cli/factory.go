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
	// Verbose is -v: the requests are shown on stderr.
	Verbose func() bool
	// WorkerTiming is how often a worker beats its lock, and when its
	// silence means it stopped (the environment's; an error for a value
	// that is not a duration).
	WorkerTiming func() (store.WorkerTiming, error)
	// Peer is the named peer of the config file.
	Peer func(name string) (*config.Peer, bool, error)
	// CredentialFor is a stored target's credential (the Kibana API key,
	// a peer's token, --token-file, A2A_COURIER_TOKEN), RecordCredential
	// a recorded task's (its profile's key: settings.recordSettings), read
	// as the command's taskView says (which it may switch to the task's
	// profile).
	CredentialFor    func(store.Target) (client.Secret, error)
	RecordCredential func(*store.Record, *taskView) (client.Secret, error)
	// KibanaForRecord is the Agent Builder client that reads a recorded
	// task's conversation, the space it reads, and whether that is the
	// task's Kibana and space (settings.kibanaForRecord).
	KibanaForRecord func(*store.Record, *taskView) (k *client.Kibana, space string, sameKibana bool, err error)
	// RecordSettings are the settings that reach a recorded task's Kibana,
	// as the taskView says (settings.recordSettings).
	RecordSettings func(*store.Record, *taskView) (*config.Settings, error)
	// ProfileReaching is profile p's settings when they reach url's Kibana.
	ProfileReaching func(p, url string) (*config.Settings, bool)
	// CallerWith is Caller for a command that reads recorded tasks as a
	// taskView says (the profile it reads a task with).
	CallerWith func(*taskView) nextstep.Caller
	// Reporter prints the tasks a command reports (report.go) as a
	// taskView says (nil: the command line's settings).
	Reporter func(*taskView) *reporter
	// GroupRun is the run of a command that only groups others (groupRun).
	GroupRun func(*cobra.Command, []string) error
}

// factory is the Factory of the command line a runs: its funcs are the
// methods of its parts (settings, engines, targets, reporter).
func (a *App) factory() *Factory {
	set, eng, tgts := a.set, a.eng, a.tgts
	return &Factory{Process: a.p, Printer: a.printer, ConfigPath: set.configPath, Flags: func() config.Flags { return a.flags }, Settings: set.load, KibanaSettings: set.kibanaSettings,
		Kibana: set.kibana, Engine: eng.engine, Store: eng.openStore, Caches: eng.caches, HTTPClients: eng.httpClients, ResolveTarget: tgts.resolveTarget, Caller: a.caller,
		Verbose: func() bool { return a.verbose }, WorkerTiming: eng.workerTiming, Peer: tgts.peer, CredentialFor: tgts.credentialFor, RecordCredential: set.recordCredential,
		KibanaForRecord: set.kibanaForRecord, RecordSettings: set.recordSettings, ProfileReaching: set.profileReaching, CallerWith: a.callerWith, Reporter: a.reporter, GroupRun: groupRun(a)}
}

// reporter is the reporter of the command line a runs, for a command that
// reads recorded tasks as v says (nil: the command line's settings).
func (a *App) reporter(v *taskView) *reporter {
	if v == nil {
		v = &taskView{}
	}
	caller := func() nextstep.Caller { return a.callerWith(v) }
	pr := func() *printer { return a.printer().withCaller(caller) }
	return &reporter{p: a.p, printer: pr, caller: caller, set: a.set, view: v}
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
// (engines.engine), for what needs no record (engines.caches) and for a detached
// worker (workerRun): the process's clock, executable and environment
// (for the workers it spawns), with parts.
func newEngine(p *Process, parts engineParts) *courier.Courier {
	return &courier.Courier{Store: parts.store, HTTPClient: parts.clients, Now: p.Now, UserAgent: userAgent(),
		Executable: p.Executable, Environ: p.Environ, Timing: parts.timing, TimingErr: parts.timingErr, Logf: parts.logf}
}
