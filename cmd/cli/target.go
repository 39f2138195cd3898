package cli

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// agentFlags address a generic A2A agent.
type agentFlags struct {
	url      string
	protocol string
	binding  string
	noStream bool
	// freshCard asks for the card even when a cached one is fresh.
	freshCard bool
	// cardOnly: only the card is read (get-card), so a generic agent's
	// credential is not needed and a missing one is no error.
	cardOnly bool
}

func addAgentFlags(cmd *cobra.Command, af *agentFlags) {
	cmd.Flags().StringVar(&af.url, "url", "", "address a generic A2A agent by its base URL (card at <url>/.well-known/agent-card.json) or its card's URL")
	cmd.Flags().StringVar(&af.protocol, "protocol", "", "speak this A2A version (0.3 or 1.0) instead of the one the card offers")
	cmd.Flags().StringVar(&af.binding, "binding", "", "speak this binding (jsonrpc or rest, HTTP+JSON) instead of the card's choice; gRPC is not spoken")
	cmd.Flags().BoolVar(&af.noStream, "no-stream", false, "follow tasks by polling even when the agent streams")
	if cmd.Name() != "send" && cmd.Name() != "send-async" {
		// Only a send follows a task by stream or by polling: get-card and
		// cancel still take the flag (a script may pass it to every
		// command) but do not list it.
		cmd.Flags().MarkHidden("no-stream")
	}
}

// splitAgentArgs reads "<agent> [text|-]", or "[text|-]" with --url.
func splitAgentArgs(af agentFlags, args []string, maxRest int) (string, []string, error) {
	if af.url != "" {
		if len(args) > maxRest {
			return "", nil, usageErrSay(say("with %s the agent is the URL: give only the text%s", nextstep.Opt("--url"), nextstep.Per(plain(" (or - for stdin)"), plain(" as message"))), "too many arguments")
		}
		return "", args, nil
	}
	if len(args) == 0 {
		return "", nil, usageErrSay(say("name an agent (see %s), a peer of the config file, or %s", nextstep.New("discover").Quoted(), nextstep.OptHole("--url", "agent URL")), "no agent given")
	}
	if len(args)-1 > maxRest {
		return "", nil, usageErr("give the agent and at most the text (or - for stdin)", "too many arguments")
	}
	return args[0], args[1:], nil
}

// target is where a command sends: a Kibana agent or a generic A2A agent.
type target struct {
	// Name is what the user called it: the agent id, the peer's name, or
	// the card's name for --url.
	Name   string
	Kind   store.TargetKind
	S      *config.Settings
	Remote *client.RemoteAgent
	Card   client.Card
	Cred   client.Secret
	Store  store.Target
	// Path is how a send reaches a Kibana agent (nil for other agents).
	Path *courier.Path
}

// targets find the agents a command names: an Agent Builder agent, a peer
// of the config file, --url; and the credentials of recorded targets.
type targets struct {
	p       *Process
	set     *settings
	eng     *engines
	printer func() *printer
	// tokenFile is --token-file (root flags as parsed).
	tokenFile func() string
}

// remoteErr is an error met with a generic A2A agent (--url or a peer):
// Run reports it with hints that speak of the agent, not of Kibana
// (remoteHint). A command that deals with such an agent wraps its errors
// (asRemote); resolveTarget and credentialFor wrap theirs.
type remoteErr struct{ err error }

func (e *remoteErr) Error() string { return e.err.Error() }
func (e *remoteErr) Unwrap() error { return e.err }

// asRemote is err met with a generic A2A agent (nil stays nil).
func asRemote(err error) error {
	var re *remoteErr
	if err == nil || errors.As(err, &re) {
		return err
	}
	return &remoteErr{err}
}

// peer returns the named peer of the config file.
func (tg *targets) peer(name string) (*config.Peer, bool, error) {
	s, err := tg.set.load()
	if err != nil {
		return nil, false, err
	}
	p, ok := s.Peers[strings.ToLower(name)]
	return &p, ok, nil
}

// resolveTarget finds out where to send: --url, a named peer, or else a
// Kibana agent id.
func (tg *targets) resolveTarget(ctx context.Context, name string, af agentFlags) (*target, error) {
	if af.url == "" && name != "" {
		p, ok, err := tg.peer(name)
		if err != nil {
			return nil, err
		}
		if ok {
			t, err := tg.remoteTarget(ctx, name, p.URL, p, af)
			return t, asRemote(err)
		}
	}
	if af.url != "" {
		t, err := tg.remoteTarget(ctx, "", af.url, nil, af)
		return t, asRemote(err)
	}
	if err := client.CheckID("agent id", name); err != nil {
		return nil, usageErrSay(say("agent ids are listed by %s", nextstep.New("discover").Quoted()), "%s", err.Error())
	}
	if err := kibanaSpeaks(af); err != nil {
		return nil, err
	}
	s, err := tg.set.kibanaSettings()
	if err != nil {
		return nil, err
	}
	k, err := tg.set.kibana(s)
	if err != nil {
		return nil, err
	}
	// The card says whether the agent streams, and proves the agent exists
	// before any task is recorded. Kibana says a card may be reused for an
	// hour: sends reuse it, get-card always asks. The release decides the
	// path (courier.DecidePath); it is read beside the card, and kept as
	// well. The engine is made here, before the reads share it.
	caches := tg.eng.caches()
	type serverAnswer struct {
		info  client.ServerInfo
		known bool
	}
	server := make(chan serverAnswer, 1)
	sctx, stopStatus := context.WithCancel(ctx)
	defer stopStatus()
	go func() {
		info, known := caches.KibanaServer(sctx, k, s.URL, af.freshCard)
		server <- serverAnswer{info, known}
	}()
	card, err := caches.KibanaCard(ctx, k, s.URL, s.APIKey, s.Space, name, af.freshCard, defaultReadTimeout)
	if err != nil {
		stopStatus() // no send follows: the release does not matter
		<-server
		if agents, lerr := k.ListAgents(ctx); lerr == nil && client.IsKind(err, client.KindNotFound) {
			ce := *classify(err)
			ce.hint = agentHint(agents, name)
			return nil, &ce
		}
		return nil, err
	}
	sv := <-server
	path := courier.DecidePath(sv.info, sv.known, s.NonBlocking, s.Sources["non_blocking"], card.Get("capabilities.streaming").Bool() && !af.noStream)
	st := store.Target{Kind: store.TargetKibana, URL: s.URL, Space: s.Space, CAFile: s.CAFile, Insecure: s.Insecure,
		Streaming: path.Stream, NonBlocking: path.NonBlocking}
	if strings.HasPrefix(s.Sources["kibana_url"], "file (profile ") {
		st.Profile = s.Profile // the Kibana is the profile's: recordSettings
	}
	if sv.known {
		st.KibanaVersion, st.KibanaFlavor = sv.info.Number, sv.info.Flavor
	}
	return &target{Name: name, Kind: store.TargetKibana, S: s, Cred: s.APIKey, Card: card, Path: &path, Store: st}, nil
}

// kibanaSpeaks refuses, before anything is sent, a --protocol or
// --binding an Agent Builder agent cannot be spoken to in: Kibana serves
// A2A 0.3 over JSON-RPC only. A value no agent takes is refused as for any
// agent; 0.3 and jsonrpc, which Kibana speaks, pass (a script may give
// them to every command).
func kibanaSpeaks(af agentFlags) error {
	b, err := client.ParseBinding(af.binding)
	if err != nil {
		return usageErr("leave it out: Agent Builder's agents speak JSON-RPC (--binding jsonrpc)", "%s", err.Error())
	}
	if af.protocol != "" && af.protocol != "0.3" && af.protocol != "1.0" {
		return usageErr("leave it out: Agent Builder's agents speak A2A 0.3 (--protocol 0.3)", "unknown protocol %q", af.protocol)
	}
	var asked []string
	if af.protocol == "1.0" {
		asked = append(asked, "A2A 1.0")
	}
	if b == client.BindingREST {
		asked = append(asked, "HTTP+JSON")
	}
	if len(asked) > 0 {
		return usageErr("drop --protocol and --binding for an Agent Builder agent: they choose how a generic agent (--url, or a peer of the config file) is spoken to",
			"Kibana's Agent Builder speaks A2A 0.3 over JSON-RPC only, not %s", strings.Join(asked, " over "))
	}
	return nil
}

// agentHint is the hint for an agent id Kibana does not know: the id
// discover knows for what was given as a name (send Chat), in other letter
// case or misspelt, if any.
func agentHint(agents []client.Agent, name string) nextstep.Text {
	ag, byName, ok := courier.SuggestAgent(agents, name)
	if !ok {
		return say("check the id; %s lists the agents of this space", nextstep.New("discover").Quoted())
	}
	meant := ag.ID
	if n := strings.TrimSpace(ag.Name); n != "" {
		meant += " (named " + strconv.Quote(n) + ")"
	}
	if byName {
		return say("did you mean %s? an agent is given by its id; %s lists them", meant, nextstep.New("discover").Quoted())
	}
	return say("did you mean %s? %s lists the agents of this space", meant, nextstep.New("discover").Quoted())
}

// remoteTarget resolves a generic agent from its card.
func (tg *targets) remoteTarget(ctx context.Context, peerName, rawURL string, p *config.Peer, af agentFlags) (*target, error) {
	s, err := tg.set.load()
	if err != nil {
		return nil, err
	}
	st := store.Target{Kind: store.TargetA2A, URL: rawURL, Peer: strings.ToLower(peerName), CAFile: s.CAFile, Insecure: s.Insecure}
	protocol, binding, noStream := af.protocol, af.binding, af.noStream
	if p != nil {
		if p.CACert != "" {
			st.CAFile = config.ExpandHome(p.CACert, tg.p.getenv)
		}
		st.Insecure = st.Insecure || p.Insecure
		protocol, binding = nonEmptyStr(protocol, p.Protocol), nonEmptyStr(binding, p.Binding)
		noStream = noStream || p.NoStream
	}
	hc, err := tg.eng.httpClients()(st)
	if err != nil {
		return nil, configErr("check the CA bundle", "%v", err)
	}
	if _, err := client.CardLocations(rawURL); err != nil {
		hint := "give the agent's base URL (its card is at <url>/.well-known/agent-card.json) or its card's URL"
		if !strings.Contains(rawURL, "://") {
			hint = "write the scheme: https://, or http:// for an agent without TLS"
		}
		if p != nil {
			return nil, configErr(hint+"; in the config file, peer "+peerName+"'s url", "%s", err.Error())
		}
		return nil, usageErr(hint, "%s", err.Error())
	}
	b, err := client.ParseBinding(binding)
	if err != nil {
		return nil, usageErr("use --binding jsonrpc or --binding rest (HTTP+JSON), or leave it out to let the card decide", "%s", err.Error())
	}
	rctx, cancel := context.WithTimeout(ctx, defaultReadTimeout)
	defer cancel()
	ra, err := client.ResolveAgentWith(rctx, hc, rawURL, client.ResolveOptions{UserAgent: userAgent(), Binding: b})
	if errors.Is(err, client.ErrNoInterface) {
		return nil, &cliError{exit: ExitUsage, code: "unsupported", message: courier.OneLine(err), err: err,
			hint: plain("a2a-courier speaks A2A over JSON-RPC (0.3, 1.x) and HTTP+JSON (1.x), not gRPC; drop --binding (or the peer's binding) to let the card decide")}
	}
	if err != nil {
		return nil, err
	}
	switch protocol {
	case "":
	case "0.3", "1.0":
		rest := ra.Binding == client.BindingREST
		if string(ra.Dialect) != protocol && !ra.Use(client.Dialect(protocol)) {
			if rest { // A2A 0.3 has no HTTP+JSON here, and the card no JSON-RPC
				return nil, &cliError{exit: ExitUsage, code: "protocol_version", message: "the card offers A2A " + otherDialect(protocol) + " over HTTP+JSON only, and A2A 0.3 is spoken over JSON-RPC alone",
					hint: plain("the agent does not speak this A2A version in a binding a2a-courier speaks: drop --protocol")}
			}
			tg.printer().warn("speaking A2A %s as asked, although the card offers only %s", protocol, otherDialect(protocol))
		}
	default:
		return nil, usageErr("use 0.3 or 1.0", "unknown protocol %q", protocol)
	}
	st.Endpoint, st.Dialect, st.Tenant, st.Binding = ra.Endpoint, string(ra.Dialect), ra.Tenant, string(ra.Binding)
	st.Streaming = ra.Streaming && !noStream
	st.AuthHeader, st.AuthPrefix = ra.Auth.Header, ra.Auth.Prefix
	// The card decides whether a credential goes at all: none to an agent
	// that declares no security scheme.
	cred, err := tg.credentialFor(st)
	if err != nil {
		if !af.cardOnly {
			return nil, err
		}
		cred = "" // the card is read without a credential
	}
	if ra.Moved {
		if cred != "" {
			return nil, configErrSay(say("address that origin directly with %s if you trust it", nextstep.Opt("--url")),
				"the card sends requests to %s, another origin than %s; the credential only goes to the origin you named", courier.Origin(ra.Endpoint), courier.Origin(ra.CardURL))
		}
		tg.printer().warn("the card sends requests to %s, another origin than the card's", courier.Origin(ra.Endpoint))
	}
	if cred == "" && ra.Auth.Header != "" && !af.cardOnly {
		tg.printer().warn("the agent's card asks for a credential (%s) and none is configured", ra.Auth.Scheme)
	}
	name := peerName
	if name == "" {
		name = ra.Name()
	}
	return &target{Name: name, Kind: store.TargetA2A, S: s, Remote: ra, Card: ra.Card, Cred: cred, Store: st}, nil
}

func otherDialect(p string) string {
	if p == "0.3" {
		return "1.0"
	}
	return "0.3"
}

// credentialFor returns the credential of a stored target: the Kibana API
// key, a peer's token, or for --url agents A2A_COURIER_TOKEN / --token-file.
func (tg *targets) credentialFor(t store.Target) (client.Secret, error) {
	if t.Kind != store.TargetA2A {
		s, err := tg.set.kibanaSettings()
		if err != nil {
			return "", err
		}
		return s.APIKey, nil
	}
	cred, err := tg.remoteCredential(t)
	return cred, asRemote(err)
}

// remoteCredential is credentialFor of a generic agent.
func (tg *targets) remoteCredential(t store.Target) (client.Secret, error) {
	switch {
	case t.AuthHeader == "":
		return "", nil // the card asks for no credential: none is sent
	case t.Peer != "":
		p, ok, err := tg.peer(t.Peer)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", configErr("add it back to the peers section of the config file", "no peer %q in the config file", t.Peer)
		}
		return config.PeerToken(t.Peer, *p, tg.p.getenv)
	case tg.tokenFile() != "":
		return config.ReadTokenFile(tg.tokenFile())
	}
	return config.AmbientToken(courier.Origin(t.URL), tg.p.getenv)
}
