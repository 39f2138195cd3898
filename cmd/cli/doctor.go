package cli

import (
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
	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
)

// Check outcomes.
const (
	checkPass = "pass"
	checkFail = "fail"
	checkWarn = "warn"
	checkSkip = "skip"
)

type check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	Hint   string `json:"hint,omitempty"`
	exit   int
}

type doctorOptions struct {
	timeout time.Duration
}

func newDoctorCmd(app *App) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the set-up: configuration, Kibana, the API key, the agents, the background worker",
		Long: `Check everything a2a-courier needs, each with pass or fail and a hint:
the configuration and its file permissions; the state directory; that Kibana
answers, over TLS; that the API key is accepted (401) and has the privilege in
the space (403); that Agent Builder is enabled (404 on the agents route); the
agents' cards (protocol version, streaming); and that a detached worker can
start and report back.

It exits 0 only when every check passes (warnings pass); otherwise with the
exit code of the first failure.`,
		Example: `  a2a-courier doctor
  a2a-courier doctor --json --profile prod`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return app.runDoctor(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 20*time.Second, "how long to wait for each check")
	return cmd
}

func (a *App) runDoctor(ctx context.Context, opts *doctorOptions) error {
	var checks []check
	add := func(c check) { checks = append(checks, c) }

	// What is missing, named (KIBANA_URL, the key, a profile to select),
	// and in --json the set-up steps.
	s, _ := a.loadSettings()
	var setup []string
	if _, err := a.kibanaSettings(); err != nil {
		ce := classify(err)
		setup = ce.setup
		hint := firstLine(ce.hint)
		if ce.hint == config.SetupSteps() {
			hint = "follow the set-up steps below"
		}
		add(check{Name: "configuration", Status: checkFail, Detail: ce.message, Hint: hint, exit: ce.exit})
	} else {
		add(check{Name: "configuration", Status: checkPass,
			Detail: fmt.Sprintf("profile %s; URL from %s; API key from %s", s.Profile, s.Sources["kibana_url"], s.Sources["api_key"])})
	}
	add(a.checkConfigFile())
	add(a.checkStateDir())

	configured := checks[0].Status == checkPass
	var kdoc *doctorKibanaDoc
	if configured {
		var kchecks []check
		kchecks, kdoc = a.checkKibana(ctx, s, opts.timeout)
		for _, c := range kchecks {
			add(c)
		}
	} else {
		for _, n := range []string{"Kibana reachable", "TLS", "API key accepted", "privilege and space", "Agent Builder enabled", "Kibana release", "agent cards"} {
			add(check{Name: n, Status: checkSkip, Detail: "needs the configuration"})
		}
	}
	add(a.checkWorker(opts.timeout))

	ok, exit := true, ExitOK
	for _, c := range checks {
		if c.Status == checkFail {
			if ok {
				exit = c.exit
				if exit == 0 {
					exit = ExitUnexpected
				}
			}
			ok = false
		}
	}
	pr := a.printer()
	if pr.json {
		doc := map[string]any{"ok": ok, "checks": checks}
		if kdoc != nil {
			doc["kibana"] = kdoc
		}
		if setup != nil {
			doc["setup"] = setup
		}
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(exit)
	}
	var b strings.Builder
	for _, c := range checks {
		mark := map[string]string{checkPass: "✓", checkFail: "✗", checkWarn: "!", checkSkip: "-"}[c.Status]
		fmt.Fprintf(&b, "%s %-22s %s\n", mark, c.Name, c.Detail)
		if c.Hint != "" && c.Status != checkPass {
			fmt.Fprintf(&b, "  %-22s hint: %s\n", "", c.Hint)
		}
	}
	if ok {
		b.WriteString("all checks passed\n")
	} else {
		b.WriteString("some checks failed\n")
	}
	if setup != nil {
		b.WriteString("\n" + config.SetupSteps() + "\n")
	}
	pr.payload(b.String())
	return exitWith(exit)
}

func (a *App) checkConfigFile() check {
	path := a.configPath()
	c := check{Name: "config file"}
	fi, err := os.Stat(path)
	switch {
	case path == "":
		c.Status, c.Detail = checkSkip, "no config directory (HOME not set)"
	case os.IsNotExist(err):
		c.Status, c.Detail = checkPass, "none at "+path+" (environment only)"
	case err != nil:
		c.Status, c.Detail, c.exit = checkFail, err.Error(), ExitUsage
	case fi.Mode().Perm()&0o077 != 0:
		if _, rerr := config.ReadFile(path); rerr != nil {
			c.Status, c.Detail, c.Hint, c.exit = checkFail, classify(rerr).message, classify(rerr).hint, ExitUsage
		} else {
			c.Status, c.Detail, c.Hint = checkWarn, fmt.Sprintf("%s is readable by others (mode %04o); it holds no key", path, fi.Mode().Perm()), "chmod 600 "+path
		}
	default:
		c.Status, c.Detail = checkPass, fmt.Sprintf("%s (mode %04o)", path, fi.Mode().Perm())
	}
	return c
}

func (a *App) checkStateDir() check {
	c := check{Name: "state directory"}
	st, err := a.openStore()
	if err != nil {
		ce := classify(err)
		c.Status, c.Detail, c.Hint, c.exit = checkFail, ce.message, ce.hint, ce.exit
		return c
	}
	fi, err := os.Stat(st.Dir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		c.Status, c.Detail, c.Hint, c.exit = checkFail, fmt.Sprintf("%s is not private", st.Dir()), "chmod 700 "+st.Dir(), ExitUsage
		return c
	}
	probe := filepath.Join(st.Dir(), ".doctor-"+uuid.NewString())
	if err := os.WriteFile(probe, []byte("x"), 0o600); err != nil {
		c.Status, c.Detail, c.Hint, c.exit = checkFail, "cannot write: "+err.Error(), "set A2A_COURIER_STATE_DIR to a directory you can write", ExitUsage
		return c
	}
	os.Remove(probe)
	recs, errs := st.List()
	c.Status, c.Detail = checkPass, fmt.Sprintf("%s (0700, writable, %d task records)", st.Dir(), len(recs))
	if len(errs) > 0 {
		c.Status, c.Detail, c.Hint = checkWarn, fmt.Sprintf("%s: %d damaged task records", st.Dir(), len(errs)), classify(errs[0]).message
	}
	return c
}

// checkKibana checks Kibana step by step; the document it returns says
// which release answers and the path sends take (nil when it could not
// tell).
func (a *App) checkKibana(ctx context.Context, s *config.Settings, timeout time.Duration) ([]check, *doctorKibanaDoc) {
	reach := check{Name: "Kibana reachable"}
	tls := check{Name: "TLS"}
	auth := check{Name: "API key accepted"}
	priv := check{Name: "privilege and space"}
	enabled := check{Name: "Agent Builder enabled"}
	release := check{Name: "Kibana release"}
	cards := check{Name: "agent cards"}
	skipRest := func(from ...*check) {
		for _, c := range from {
			if c.Status == "" {
				c.Status, c.Detail = checkSkip, "needs the checks above"
			}
		}
	}
	var kdoc *doctorKibanaDoc
	out := func() ([]check, *doctorKibanaDoc) {
		return []check{reach, tls, auth, priv, enabled, release, cards}, kdoc
	}

	k, err := a.kibana(s)
	if err != nil {
		ce := classify(err)
		reach.Status, reach.Detail, reach.Hint, reach.exit = checkFail, ce.message, ce.hint, ce.exit
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
	ce := &cliError{}
	if err != nil {
		ce = classify(err)
	}
	switch {
	case err == nil || (kind != client.KindUnreachable && kind != client.KindTLS && kind != client.KindConnection):
		reach.Status, reach.Detail = checkPass, fmt.Sprintf("%s answered in %s", s.URL, took)
	default:
		reach.Status, reach.Detail, reach.Hint, reach.exit = checkFail, ce.message, ce.hint, ce.exit
		if kind == client.KindTLS {
			reach.Status, reach.Detail = checkPass, "the host answers"
			tls.Status, tls.Detail, tls.Hint, tls.exit = checkFail, ce.message, ce.hint, ce.exit
		}
		skipRest(&tls, &auth, &priv, &enabled, &release, &cards)
		return out()
	}
	if u.Scheme == "https" {
		tls.Status, tls.Detail = checkPass, "certificate verified"
		if s.Insecure {
			tls.Status, tls.Detail, tls.Hint = checkWarn, "verification is switched off (A2A_COURIER_INSECURE)", "trust the CA with A2A_COURIER_CA_CERT instead"
		}
	} else if isLoopback(u.Hostname()) {
		tls.Status, tls.Detail = checkPass, "plain HTTP on loopback"
	} else {
		tls.Status, tls.Detail, tls.Hint = checkWarn, "plain HTTP: the API key crosses the network unencrypted", "use https://"
	}
	switch kind {
	case client.KindAuth:
		auth.Status, auth.Detail, auth.Hint, auth.exit = checkFail, ce.message, ce.hint, ce.exit
		skipRest(&priv, &enabled, &release, &cards)
		return out()
	case client.KindForbidden:
		auth.Status, auth.Detail = checkPass, "the key is valid"
		priv.Status, priv.Detail, priv.Hint, priv.exit = checkFail, ce.message, ce.hint, ce.exit
		skipRest(&enabled, &release, &cards)
		return out()
	case client.KindNotFound:
		auth.Status, priv.Status = checkPass, checkPass
		enabled.Status, enabled.Detail, enabled.exit = checkFail, ce.message, ExitNotFound
		enabled.Hint = "Agent Builder is not enabled in this Kibana (9.2/9.3: Advanced Settings), or the URL is not Kibana's"
		skipRest(&release, &cards)
		return out()
	}
	if err != nil {
		auth.Status, auth.Detail, auth.Hint, auth.exit = checkFail, ce.message, ce.hint, ce.exit
		skipRest(&priv, &enabled, &release, &cards)
		return out()
	}
	space := s.Space
	if space == "" {
		space = "default"
	}
	auth.Status, auth.Detail = checkPass, "the key is valid"
	priv.Status, priv.Detail = checkPass, "space "+space
	enabled.Status, enabled.Detail = checkPass, fmt.Sprintf("%d agents", len(agents))
	if len(agents) == 0 {
		enabled.Status, enabled.Hint = checkWarn, "no agents in this space: check KIBANA_SPACE_ID"
	}
	release, kdoc = a.checkRelease(ctx, s, k)
	cards = checkCards(ctx, k, agents, timeout)
	return out()
}

// checkCards reads the cards of the first ten agents: their protocol and
// whether they stream.
func checkCards(ctx context.Context, k *client.Kibana, agents []client.Agent, timeout time.Duration) check {
	cards := check{Name: "agent cards"}
	cards.Status = checkPass
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
			cards.Status, cards.Hint = checkFail, classify(err).hint
			cards.exit = classify(err).exit
			notes = append(notes, ag.ID+": "+classify(err).message)
			continue
		}
		streaming := "off"
		if card.Get("capabilities.streaming").Bool() {
			streaming = "on"
		}
		notes = append(notes, fmt.Sprintf("%s: protocol %s, streaming %s", ag.ID, nonEmptyStr(card.Get("protocolVersion").String(), "?"), streaming))
	}
	if len(notes) == 0 {
		cards.Status, cards.Detail = checkSkip, "no agents"
	} else {
		cards.Detail = strings.Join(notes, "; ")
	}
	return cards
}

// checkRelease reads Kibana's status afresh (refreshing the cached answer
// sends use) and says which path a send will take.
func (a *App) checkRelease(ctx context.Context, s *config.Settings, k *client.Kibana) (check, *doctorKibanaDoc) {
	c := check{Name: "Kibana release"}
	info, known := a.caches().KibanaServer(ctx, k, s.URL, true)
	p := courier.DecidePath(info, known, s.NonBlocking, s.Sources["non_blocking"], false)
	doc := &doctorKibanaDoc{Path: p.Name, Why: p.Why}
	if known {
		doc.Version, doc.BuildFlavor = info.Number, info.Flavor
	}
	c.Status, c.Detail = checkPass, fmt.Sprintf("Kibana %s, %s path: %s", info.String(), p.Name, p.Why)
	if p.Name == courier.PathBlocking && !p.NonBlocking {
		c.Detail += " (a message/stream to an agent whose card says streaming)"
	}
	if !known {
		c.Status, c.Detail = checkWarn, "unknown (GET /api/status could not be read): "+p.Why
		c.Hint = "any authenticated key may read /api/status; a proxy may block it. Nothing is lost: blocking:false is safe on every release"
	}
	if aborts, placed := info.AbortsOnDisconnect(); known && placed && aborts && !p.NonBlocking {
		c.Status = checkWarn
		c.Hint = "unset non_blocking (or set it to true) unless this Kibana's Task Manager runs cannot be read back"
	}
	return c, doc
}

// doctorKibanaDoc is the "kibana" object of doctor --json: the release and
// the path a send takes.
type doctorKibanaDoc struct {
	Version     string `json:"version,omitempty"`
	BuildFlavor string `json:"build_flavor,omitempty"`
	Path        string `json:"path,omitempty"`
	Why         string `json:"why"`
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkWorker starts a probe worker the way send-async starts a real one
// and waits for its report.
func (a *App) checkWorker(timeout time.Duration) check {
	c := check{Name: "background worker"}
	eng, err := a.engine()
	if err != nil {
		c.Status, c.Detail = checkSkip, "needs the state directory"
		return c
	}
	start := time.Now()
	rep, err := eng.Probe(min(timeout, 10*time.Second))
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case errors.Is(err, courier.ErrNoProbeReport):
		c.Status, c.Detail, c.Hint, c.exit = checkFail, "no report from the worker", "see "+eng.Store.LogPath(), ExitUnexpected
	case err != nil:
		c.Status, c.Detail, c.exit = checkFail, err.Error(), ExitUnexpected
		c.Hint = "the binary must be able to run itself (os.Executable): " + err.Error()
	case !rep.SessionLeader || !rep.StdinDevNull || !rep.Credential:
		c.Status, c.exit = checkFail, ExitUnexpected
		c.Detail = fmt.Sprintf("started but: session leader %v, stdin /dev/null %v, credential received %v", rep.SessionLeader, rep.StdinDevNull, rep.Credential)
		c.Hint = "see " + eng.Store.LogPath()
	default:
		c.Status, c.Detail = checkPass, fmt.Sprintf("started detached and reported back in %s", took)
	}
	return c
}
