// Package simulator is what the demo and dev-server commands ask of the
// Agent Builder simulator, in types that do not bring the simulator with
// them: the release binary links this package, never the simulator
// (client/agentbuildertest). A build with the tag simulator hands the
// command line Start of internal/simulator/agentbuilder; the release build
// has none, and the two commands say how to get one.
package simulator

import (
	"context"
	"time"
)

// Start starts a simulator listening on addr ("127.0.0.1:0" for any free
// loopback port) as cfg says. Its errors are a *ConfigError (the
// configuration is not one it runs) or a *ListenError.
type Start func(addr string, cfg Config) (Server, error)

// Config is a simulator's configuration: a dev-server config file, or
// without one the demo's agents and key, and the overrides of dev-server's
// flags (nil: the config's own).
type Config struct {
	// YAML is the dev-server config file (docs/simulator.md); nil for the
	// demo agents and the demo key.
	YAML []byte

	Version        *string
	DataFile       *string
	PrecreateEmpty *bool
	Streaming      *bool
	ProxyCutAfter  *time.Duration
	IdleCloseAfter *time.Duration
	ResponseDelay  *time.Duration
	ExtraRunTime   *time.Duration
	FailRuns       *int

	// Logf, when set, receives every request and run.
	Logf func(format string, args ...any)
}

// Server is a running simulator.
type Server interface {
	// URL is its base URL, http://<addr>, what KIBANA_URL is set to.
	URL() string
	Addr() string
	// Version is the Kibana release it imitates; APIKey the first key it
	// accepts ("" when it accepts none); Agents how many agents it serves.
	Version() string
	APIKey() string
	Agents() int
	// SetProxyCut makes a proxy cut every A2A call still running after d
	// (0: none).
	SetProxyCut(d time.Duration)
	// Runs counts the runs of a context: nothing is ever sent twice.
	Runs(contextID string) int
	Shutdown(ctx context.Context) error
	Close()
}

// ConfigError is a simulator configuration that does not load (Format:
// the file is not a config) or validate.
type ConfigError struct {
	Err    error
	Format bool
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ListenError is an address the simulator cannot listen on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return "cannot listen on " + e.Addr + ": " + e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }
