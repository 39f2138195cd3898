// Package doctor checks a2a-courier's set-up end to end, each check with
// pass, warn, fail or skip and a hint: the configuration and its file, the
// state directory, Kibana step by step (reachable, TLS, the key, the
// privilege, Agent Builder), the release and the path sends take, the
// agents' cards, and a probe worker started as send-async starts one.
// The command line turns errors into their message, hint and exit code
// (Env.Classify) and prints the report.
package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/store"
)

// Check outcomes.
const (
	Pass = "pass"
	Fail = "fail"
	Warn = "warn"
	Skip = "skip"
)

// Exit codes of the command line's table (cmd/cli/report.go) that a check
// fails with when no error names one.
const (
	exitUnexpected = 1
	exitUsage      = 2
	exitNotFound   = 5
)

// Check is one check of the report, as doctor --json prints it; Exit is
// the exit code of its failure.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	Hint   string `json:"hint,omitempty"`
	Exit   int    `json:"-"`
}

// Problem is an error as the command line reports it.
type Problem struct {
	Message, Hint string
	Exit          int
	// Setup lists the set-up steps, when nothing is configured.
	Setup []string
}

// Env is what the checks take from the command line.
type Env struct {
	// Settings are the settings as loaded (nil when they could not be),
	// and Configured the error of requiring a Kibana and its key (nil when
	// both are there).
	Settings   *config.Settings
	Configured error
	ConfigPath string
	Store      func() (*store.Store, error)
	Kibana     func(*config.Settings) (*client.Kibana, error)
	Engine     func() (*courier.Courier, error)
	Caches     func() *courier.Courier
	Classify   func(error) Problem
	// Timeout bounds each check.
	Timeout time.Duration
	// LookupEnv reads the environment, for the proxy variables (nil: the
	// proxy is not checked).
	LookupEnv func(string) (string, bool)
}

// Report is the outcome of every check.
type Report struct {
	OK     bool
	Exit   int
	Checks []Check
	// Kibana is the release and the path sends take (nil when it could
	// not be told); Setup the set-up steps when nothing is configured.
	Kibana *KibanaDoc
	Setup  []string
}

// kibanaChecks are the checks of Kibana, skipped without a configuration.
var kibanaChecks = []string{"Kibana reachable", "TLS", "API key accepted", "privilege and space", "Agent Builder enabled", "Kibana release", "agent cards"}

// Run runs every check; the report's exit code is that of the first that
// failed (0 when none did: warnings pass).
func Run(ctx context.Context, e *Env) Report {
	var r Report
	add := func(c Check) { r.Checks = append(r.Checks, c) }
	if e.Configured != nil {
		// What is missing, named (KIBANA_URL, the key, a profile to
		// select), and the set-up steps.
		p := e.Classify(e.Configured)
		r.Setup = p.Setup
		hint := strings.SplitN(p.Hint, "\n", 2)[0]
		if p.Hint == config.SetupSteps() {
			hint = "follow the set-up steps below"
		}
		add(Check{Name: "configuration", Status: Fail, Detail: p.Message, Hint: hint, Exit: p.Exit})
	} else {
		s := e.Settings
		add(Check{Name: "configuration", Status: Pass,
			Detail: fmt.Sprintf("profile %s; URL from %s; API key from %s", s.Profile, s.Sources["kibana_url"], s.Sources["api_key"])})
	}
	add(e.configFile())
	add(e.stateDir())
	if e.Configured == nil {
		if c, ok := e.proxy(e.Settings.URL); ok {
			add(c)
		}
		var kchecks []Check
		kchecks, r.Kibana = e.kibana(ctx, e.Settings, e.Timeout)
		r.Checks = append(r.Checks, kchecks...)
	} else {
		for _, n := range kibanaChecks {
			add(Check{Name: n, Status: Skip, Detail: "needs the configuration"})
		}
	}
	add(e.worker(e.Timeout))
	r.OK = true
	for _, c := range r.Checks {
		if c.Status == Fail {
			if r.OK {
				r.Exit = cmp.Or(c.Exit, exitUnexpected)
			}
			r.OK = false
		}
	}
	return r
}

// configFile checks the config file: there or not, private, readable.
func (e *Env) configFile() Check {
	path := e.ConfigPath
	c := Check{Name: "config file"}
	fi, err := os.Stat(path)
	switch {
	case path == "":
		c.Status, c.Detail = Skip, "no config directory (HOME not set)"
	case os.IsNotExist(err):
		c.Status, c.Detail = Pass, "none at "+path+" (environment only)"
	case err != nil:
		c.Status, c.Detail, c.Exit = Fail, err.Error(), exitUsage
	default:
		// Its mode on Unix, its ACL on Windows.
		c = configFileAccess(path, ownfile.File(path, fi), e.Classify)
	}
	return c
}

// configFileAccess: a config file others can read fails when it holds a
// key (ReadFile refuses it) and warns when it does not.
func configFileAccess(path string, a ownfile.Access, classify func(error) Problem) Check {
	c := Check{Name: "config file"}
	if !a.Open {
		c.Status, c.Detail = Pass, fmt.Sprintf("%s (%s)", path, a.Detail)
		return c
	}
	if _, rerr := config.ReadFile(path); rerr != nil {
		c.Status, c.Detail, c.Hint, c.Exit = Fail, classify(rerr).Message, classify(rerr).Hint, exitUsage
	} else {
		c.Status, c.Detail, c.Hint = Warn, fmt.Sprintf("%s is readable by others (%s); it holds no key", path, a.Detail), a.Hint
	}
	return c
}

// stateDir checks that the state directory is private and writable, and
// counts its records.
func (e *Env) stateDir() Check {
	c := Check{Name: "state directory"}
	st, err := e.Store()
	if err != nil {
		ce := e.Classify(err)
		c.Status, c.Detail, c.Hint, c.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		return c
	}
	fi, err := os.Stat(st.Dir())
	private := ownfile.Access{Open: true, Hint: ownfile.DirHint(st.Dir())}
	if err == nil {
		private = ownfile.Dir(st.Dir(), fi) // 0700 on Unix, an owner-only ACL on Windows
	}
	if private.Open {
		c.Status, c.Detail, c.Hint, c.Exit = Fail, fmt.Sprintf("%s is not private", st.Dir())+private.Who, private.Hint, exitUsage
		return c
	}
	probe := filepath.Join(st.Dir(), ".doctor-"+uuid.NewString())
	if err := os.WriteFile(probe, []byte("x"), 0o600); err != nil {
		c.Status, c.Detail, c.Hint, c.Exit = Fail, "cannot write: "+err.Error(), "set A2A_COURIER_STATE_DIR to a directory you can write", exitUsage
		return c
	}
	os.Remove(probe)
	recs, errs := st.List()
	c.Status, c.Detail = Pass, fmt.Sprintf("%s (%s, writable, %d task records)", st.Dir(), private.Detail, len(recs))
	if len(errs) > 0 {
		c.Status, c.Detail, c.Hint = Warn, fmt.Sprintf("%s: %d damaged task records", st.Dir(), len(errs)), e.Classify(errs[0]).Message
	}
	return c
}

// kibana checks Kibana step by step; the document it returns says
// which release answers and the path sends take (nil when it could not
// tell).
func (e *Env) kibana(ctx context.Context, s *config.Settings, timeout time.Duration) ([]Check, *KibanaDoc) {
	reach := Check{Name: "Kibana reachable"}
	tls := Check{Name: "TLS"}
	auth := Check{Name: "API key accepted"}
	priv := Check{Name: "privilege and space"}
	enabled := Check{Name: "Agent Builder enabled"}
	release := Check{Name: "Kibana release"}
	cards := Check{Name: "agent cards"}
	skipRest := func(from ...*Check) {
		for _, c := range from {
			if c.Status == "" {
				c.Status, c.Detail = Skip, "needs the checks above"
			}
		}
	}
	var kdoc *KibanaDoc
	out := func() ([]Check, *KibanaDoc) {
		return []Check{reach, tls, auth, priv, enabled, release, cards}, kdoc
	}

	k, err := e.Kibana(s)
	if err != nil {
		ce := e.Classify(err)
		reach.Status, reach.Detail, reach.Hint, reach.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		skipRest(&tls, &auth, &priv, &enabled, &release, &cards)
		return out()
	}
	u, _ := url.Parse(s.URL)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	start := time.Now()
	agents, err := k.ListAgents(rctx)
	cancel()
	took := time.Since(start).Round(time.Millisecond)
	kind := client.KindOf(err)
	ce := Problem{}
	if err != nil {
		ce = e.Classify(err)
	}
	switch {
	case err == nil || (kind != client.KindUnreachable && kind != client.KindTLS && kind != client.KindConnection):
		reach.Status, reach.Detail = Pass, fmt.Sprintf("%s answered in %s", s.URL, took)
	default:
		reach.Status, reach.Detail, reach.Hint, reach.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		if kind == client.KindTLS {
			reach.Status, reach.Detail = Pass, "the host answers"
			tls.Status, tls.Detail, tls.Hint, tls.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		}
		skipRest(&tls, &auth, &priv, &enabled, &release, &cards)
		return out()
	}
	if u.Scheme == "https" {
		tls.Status, tls.Detail = Pass, "certificate verified"
		if s.Insecure {
			tls.Status, tls.Detail, tls.Hint = Warn, "verification is switched off (A2A_COURIER_INSECURE)", "trust the CA with A2A_COURIER_CA_CERT instead"
		}
	} else if IsLoopback(u.Hostname()) {
		tls.Status, tls.Detail = Pass, "plain HTTP on loopback"
	} else {
		tls.Status, tls.Detail, tls.Hint = Warn, "plain HTTP: the API key crosses the network unencrypted", "use https://"
	}
	switch kind {
	case client.KindAuth:
		auth.Status, auth.Detail, auth.Hint, auth.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		skipRest(&priv, &enabled, &release, &cards)
		return out()
	case client.KindForbidden:
		auth.Status, auth.Detail = Pass, "the key is valid"
		priv.Status, priv.Detail, priv.Hint, priv.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		skipRest(&enabled, &release, &cards)
		return out()
	case client.KindNotFound:
		auth.Status, priv.Status = Pass, Pass
		enabled.Status, enabled.Detail, enabled.Exit = Fail, ce.Message, exitNotFound
		enabled.Hint = "Agent Builder is not enabled in this Kibana (9.2/9.3: Advanced Settings), or the URL is not Kibana's"
		skipRest(&release, &cards)
		return out()
	}
	if err != nil {
		auth.Status, auth.Detail, auth.Hint, auth.Exit = Fail, ce.Message, ce.Hint, ce.Exit
		skipRest(&priv, &enabled, &release, &cards)
		return out()
	}
	space := s.Space
	if space == "" {
		space = "default"
	}
	auth.Status, auth.Detail = Pass, "the key is valid"
	priv.Status, priv.Detail = Pass, "space "+space
	enabled.Status, enabled.Detail = Pass, fmt.Sprintf("%d agents", len(agents))
	if len(agents) == 0 {
		enabled.Status, enabled.Hint = Warn, "no agents in this space: check KIBANA_SPACE_ID"
	}
	release, kdoc = e.release(ctx, s, k)
	cards = e.cards(ctx, k, agents, timeout)
	return out()
}

// cards reads the cards of the first ten agents: their protocol and
// whether they stream.
func (e *Env) cards(ctx context.Context, k *client.Kibana, agents []client.Agent, timeout time.Duration) Check {
	cards := Check{Name: "agent cards"}
	cards.Status = Pass
	var notes []string
	for i, ag := range agents {
		if i == 10 {
			notes = append(notes, fmt.Sprintf("and %d more not checked", len(agents)-10))
			break
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		card, err := k.AgentCard(cctx, ag.ID)
		cancel()
		if err != nil {
			p := e.Classify(err)
			cards.Status, cards.Hint, cards.Exit = Fail, p.Hint, p.Exit
			notes = append(notes, ag.ID+": "+p.Message)
			continue
		}
		streaming := "off"
		if card.Get("capabilities.streaming").Bool() {
			streaming = "on"
		}
		notes = append(notes, fmt.Sprintf("%s: protocol %s, streaming %s", ag.ID, cmp.Or(card.Get("protocolVersion").String(), "?"), streaming))
	}
	if len(notes) == 0 {
		cards.Status, cards.Detail = Skip, "no agents"
	} else {
		cards.Detail = strings.Join(notes, "; ")
	}
	return cards
}

// release reads Kibana's status afresh (refreshing the cached answer
// sends use) and says which path a send will take.
func (e *Env) release(ctx context.Context, s *config.Settings, k *client.Kibana) (Check, *KibanaDoc) {
	c := Check{Name: "Kibana release"}
	info, known := e.Caches().KibanaServer(ctx, k, s.URL, true)
	p := courier.DecidePath(info, known, s.NonBlocking, s.Sources["non_blocking"], false)
	doc := &KibanaDoc{Path: p.Name, Why: p.Why}
	if known {
		doc.Version, doc.BuildFlavor = info.Number, info.Flavor
	}
	c.Status, c.Detail = Pass, fmt.Sprintf("Kibana %s, %s path: %s", info.String(), p.Name, p.Why)
	if p.Name == courier.PathBlocking && !p.NonBlocking {
		c.Detail += "; an agent whose card says streaming is sent to by message/stream"
	}
	if !known {
		c.Status, c.Detail = Warn, "unknown (GET /api/status could not be read): "+p.Why
		c.Hint = "any authenticated key may read /api/status; a proxy may block it. Nothing is lost: blocking:false is safe on every release"
	}
	if aborts, placed := info.AbortsOnDisconnect(); known && placed && aborts && !p.NonBlocking {
		c.Status = Warn
		c.Hint = "unset non_blocking (or set it to true) unless this Kibana's Task Manager runs cannot be read back"
	}
	return c, doc
}

// KibanaDoc is the "kibana" object of doctor --json: the release and
// the path a send takes.
type KibanaDoc struct {
	Version     string `json:"version,omitempty"`
	BuildFlavor string `json:"build_flavor,omitempty"`
	Path        string `json:"path,omitempty"`
	Why         string `json:"why"`
}

// IsLoopback reports whether host names this machine (localhost, a
// loopback address).
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// worker starts a probe worker the way send-async starts a real one
// and waits for its report.
func (e *Env) worker(timeout time.Duration) Check {
	c := Check{Name: "background worker"}
	eng, err := e.Engine()
	if err != nil {
		c.Status, c.Detail = Skip, "needs the state directory"
		return c
	}
	start := time.Now()
	rep, err := eng.Probe(min(timeout, 10*time.Second))
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case errors.Is(err, courier.ErrNoProbeReport):
		c.Status, c.Detail, c.Hint, c.Exit = Fail, "no report from the worker", "see "+eng.Store.LogPath(), exitUnexpected
	case err != nil:
		c.Status, c.Detail, c.Exit = Fail, err.Error(), exitUnexpected
		c.Hint = "the binary must be able to run itself (os.Executable): " + err.Error()
	case !rep.Detached || !rep.StdinDevNull || !rep.Credential:
		c.Status, c.Exit = Fail, exitUnexpected
		c.Detail = fmt.Sprintf("started but: detached (%s) %v, stdin %s %v, credential received %v", detachedMeans, rep.Detached, os.DevNull, rep.StdinDevNull, rep.Credential)
		c.Hint = "see " + eng.Store.LogPath()
	case rep.InJob:
		c.Status = Warn
		c.Detail = fmt.Sprintf("started detached and reported back in %s, but in the caller's job: the job refuses CREATE_BREAKAWAY_FROM_JOB, so a worker ends when its caller's job does", took)
		c.Hint = "a task whose worker ended is not lost: `a2a-courier result <contextId> --wait` starts another, which reads the reply back without sending again"
	default:
		c.Status, c.Detail = Pass, fmt.Sprintf("started detached and reported back in %s", took)
	}
	return c
}
