// Package agentbuilder serves the demo and dev-server commands with the
// Agent Builder simulator, client/agentbuildertest. Only a build with the
// tag simulator (and the tests) link it.
package agentbuilder

import (
	"bytes"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/simulator"
)

// Start is a simulator.Start: the configuration loaded (or the demo's),
// the overrides applied, validated, and listening on addr.
func Start(addr string, cfg simulator.Config) (simulator.Server, error) {
	o := agentbuildertest.DemoOptions()
	if cfg.YAML != nil {
		var err error
		if o, err = agentbuildertest.LoadOptions(bytes.NewReader(cfg.YAML)); err != nil {
			return nil, &simulator.ConfigError{Err: err, Format: true}
		}
	}
	apply(&o, cfg)
	if err := o.Validate(); err != nil {
		return nil, &simulator.ConfigError{Err: err}
	}
	srv, err := agentbuildertest.Listen(addr, o) // validated: its error is the address's
	if err != nil {
		return nil, &simulator.ListenError{Addr: addr, Err: err}
	}
	return &server{Server: srv, opts: o}, nil
}

// apply puts the flags' overrides over the options.
func apply(o *agentbuildertest.Options, cfg simulator.Config) {
	if cfg.Version != nil {
		o.Version = agentbuildertest.Version(*cfg.Version)
	}
	if cfg.DataFile != nil {
		o.DataFile = *cfg.DataFile
	}
	if cfg.PrecreateEmpty != nil {
		o.PrecreateEmpty = *cfg.PrecreateEmpty
	}
	if cfg.Streaming != nil {
		o.Streaming = cfg.Streaming
	}
	for _, d := range []struct {
		from *time.Duration
		to   *time.Duration
	}{
		{cfg.ProxyCutAfter, &o.Faults.ProxyCutAfter}, {cfg.IdleCloseAfter, &o.Faults.IdleCloseAfter},
		{cfg.ResponseDelay, &o.Faults.ResponseDelay}, {cfg.ExtraRunTime, &o.Faults.ExtraRunTime},
	} {
		if d.from != nil {
			*d.to = *d.from
		}
	}
	if cfg.FailRuns != nil {
		o.Faults.FailRuns = *cfg.FailRuns
	}
	if cfg.Logf != nil {
		o.Logf = cfg.Logf
	}
}

// server is a running simulator with the options it runs with.
type server struct {
	*agentbuildertest.Server
	opts agentbuildertest.Options
}

func (s *server) URL() string { return s.Server.URL }

func (s *server) Version() string {
	if s.opts.Version == "" {
		return string(agentbuildertest.DefaultVersion)
	}
	return string(s.opts.Version)
}

func (s *server) APIKey() string {
	if len(s.opts.Keys) == 0 {
		return ""
	}
	return s.opts.Keys[0].APIKey
}

func (s *server) Agents() int { return len(s.opts.Agents) }

func (s *server) SetProxyCut(d time.Duration) {
	s.SetFaults(agentbuildertest.Faults{ProxyCutAfter: d})
}
