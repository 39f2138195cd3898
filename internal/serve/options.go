// Package serve is the A2A server of `a2a-courier serve --exec`: any
// command-line agent as a durable A2A agent. Each message runs the command
// once (internal/runner); each task is recorded before its command starts
// and kept across restarts; the card, JSON-RPC (A2A 0.3 and 1.0 method
// names) and HTTP+JSON (A2A 1.0) bindings speak the protocol through
// client/wire, the client's own copy of it. The guardrails of
// docs/design.md ("Serving") hold: loopback unless told otherwise (then
// TLS and tokens), per-caller bearer tokens kept as hashes, a per-caller
// rate limit, at most --concurrency runs (past it, "busy" with a retry
// hint), and an audit log of metadata only.
package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/runner"
)

// Skill is a skill the card lists.
type Skill struct{ ID, Name, Description string }

// Options configure a server.
type Options struct {
	// Exec is the command line run once per message; Shell runs it with
	// the system's shell instead of splitting it.
	Exec  string
	Shell bool
	// Name, Description, Version and Skills are the card's.
	Name, Description, Version string
	Skills                     []Skill
	// Listen is the address to listen on (default 127.0.0.1:8790).
	// PublicURL is the URL the card gives (default from Listen).
	Listen, PublicURL string
	// TLSCert and TLSKey serve HTTPS; required with a non-loopback Listen.
	TLSCert, TLSKey string
	// TokensFile holds "name token" lines, one caller a line; required
	// with a non-loopback Listen. Without it (loopback only) serve makes
	// <StateDir>/local-token, one token of the caller "local".
	TokensFile string
	// StateDir keeps the tasks (tasks/) and the audit log (audit.jsonl).
	StateDir string
	// Concurrency is the most runs at a time (default 1); past it a send
	// is answered busy.
	Concurrency int
	// ResponseWindow bounds how long a blocking send waits (default 60s);
	// past it the task is returned working, and goes on.
	ResponseWindow time.Duration
	// Timeout bounds a run (default 30m); RetryAfter is the busy hint
	// (default 10s).
	Timeout    time.Duration
	RetryAfter time.Duration
	// RatePerMinute and Burst limit each caller's requests (default 120
	// a minute, bursts of 30).
	RatePerMinute float64
	Burst         int
	// MaxRequestBytes bounds a request body (default 16 MiB).
	MaxRequestBytes int64
	// Keep is how long finished tasks are kept (default 7 days).
	Keep time.Duration
	// Limits bound each run's output.
	Limits runner.Limits
	// LookupEnv is the server's environment (os.LookupEnv by default).
	LookupEnv func(string) (string, bool)
	// Log gets the server's log lines (metadata only).
	Log io.Writer
	// Ready, when set, is called with the bound address once it listens.
	Ready func(addr string)
}

// Defaults of Options.
const (
	DefaultListen         = "127.0.0.1:8790"
	DefaultResponseWindow = 60 * time.Second
	DefaultTimeout        = 30 * time.Minute
)

func (o *Options) setDefaults() {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.ResponseWindow <= 0 {
		o.ResponseWindow = DefaultResponseWindow
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 10 * time.Second
	}
	if o.RatePerMinute <= 0 {
		o.RatePerMinute = 120
	}
	if o.Burst <= 0 {
		o.Burst = 30
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 16 << 20
	}
	if o.Keep <= 0 {
		o.Keep = 7 * 24 * time.Hour
	}
	if o.Name == "" {
		o.Name = "a2a-courier serve"
	}
	if o.Description == "" {
		o.Description = "A command-line agent served over A2A by a2a-courier"
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// UsageError is a bad option: the command says so with its hint.
type UsageError struct{ Msg, Hint string }

func (e *UsageError) Error() string { return e.Msg }

// Loopback reports whether the host of addr is a loopback address.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// argv checks the options and returns the command to run.
func (o *Options) argv() ([]string, error) {
	if strings.TrimSpace(o.Exec) == "" {
		return nil, &UsageError{Msg: "serve needs --exec, the command that answers each message", Hint: `a2a-courier serve --exec "my-agent --headless"`}
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("--listen %q is not host:port", o.Listen), Hint: "use --listen 127.0.0.1:8790"}
	}
	if !Loopback(o.Listen) {
		if o.TLSCert == "" || o.TLSKey == "" || o.TokensFile == "" {
			return nil, &UsageError{Msg: fmt.Sprintf("--listen %s is not a loopback address: it needs --tls-cert-file, --tls-key-file and --tokens-file", o.Listen),
				Hint: "serve on another machine's network only with TLS and a token per caller; or keep the default 127.0.0.1"}
		}
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, &UsageError{Msg: "--tls-cert-file and --tls-key-file go together", Hint: "give both, or neither"}
	}
	if o.Shell {
		return runner.ShellArgv(o.Exec), nil
	}
	argv, err := runner.Split(o.Exec)
	if err != nil {
		return nil, &UsageError{Msg: "--exec: " + err.Error(), Hint: "quote words with ' or \"; use --shell for pipes and redirections"}
	}
	// The command runs in its own folder: a relative path is taken from
	// here, a bare name from PATH, now.
	if strings.ContainsAny(argv[0], `/\`) {
		abs, err := filepath.Abs(argv[0])
		if err == nil {
			argv[0] = abs
		}
	} else if p, err := exec.LookPath(argv[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			argv[0] = abs
		}
	} else {
		return nil, &UsageError{Msg: fmt.Sprintf("--exec: %s is not found in PATH", argv[0]), Hint: "give the command's full path"}
	}
	return argv, nil
}

var errNoState = errors.New("serve needs a state directory")
