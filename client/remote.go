package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/wire"
)

// Dialect is the A2A protocol version spoken to an agent (wire.Dialect).
type Dialect = wire.Dialect

// The dialects the client speaks.
const (
	V03 = wire.V03
	V10 = wire.V10
)

// Auth says how a credential is sent, as an agent card's securitySchemes
// describe it.
type Auth struct {
	// Header is the header name, "" when the agent needs no credential.
	Header string `json:"header,omitempty"`
	// Prefix goes before the credential: "Bearer " for HTTP bearer, "" for
	// an API key header.
	Prefix string `json:"prefix,omitempty"`
	// Scheme names the scheme for messages: "bearer", "apiKey".
	Scheme string `json:"scheme,omitempty"`
}

// RemoteAgent is an A2A agent resolved from its card: where to send
// requests, in which dialect and binding, and how to authenticate.
type RemoteAgent struct {
	Card     Card
	CardURL  string
	Endpoint string
	Dialect  Dialect
	// Binding is BindingJSONRPC or BindingREST (HTTP+JSON, A2A 1.0).
	Binding Binding
	Tenant  string
	// Streaming is the card's capabilities.streaming.
	Streaming bool
	Auth      Auth
	// Moved is set when the card's endpoint is on another origin than the
	// card; the caller decides whether to follow it.
	Moved bool
}

// Name returns the card's name.
func (r *RemoteAgent) Name() string { return r.Card.Get("name").String() }

// CardLocations returns the URLs where the card of an agent addressed by
// rawURL may be: the URL itself when it names a .json file, else the
// well-known paths below it (agent-card.json, then the older agent.json).
func CardLocations(rawURL string) ([]string, error) {
	rawURL = strings.TrimSpace(rawURL)
	if strings.Contains(rawURL, "@") {
		// user:password@host, however the password reads (one that
		// looks like a port and a path parses without a User).
		return nil, fmt.Errorf("the agent URL must not carry a user name or password (it holds an '@'); use a token")
	}
	if !strings.Contains(rawURL, "://") {
		return nil, fmt.Errorf("the agent URL %q must start with https:// or http://", redactRawURL(rawURL))
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid agent URL %q: use http(s)://host[/path]", redactRawURL(rawURL))
	}
	if u.User != nil {
		return nil, fmt.Errorf("the agent URL must not carry a user name or password")
	}
	u.Fragment = ""
	if strings.HasSuffix(u.Path, ".json") {
		return []string{u.String()}, nil
	}
	base := strings.TrimRight(u.String(), "/")
	return []string{base + "/.well-known/agent-card.json", base + "/.well-known/agent.json"}, nil
}

// ErrNoInterface means an agent card offers no interface the client speaks
// (only gRPC, say), or none in the binding asked for: the agent cannot be
// reached this way, however often one tries.
var ErrNoInterface = errors.New("the card offers no interface this client speaks")

// ResolveOptions tune ResolveAgentWith.
type ResolveOptions struct {
	// UserAgent is sent with the card request.
	UserAgent string
	// Binding is the caller's choice of binding (a --binding flag, a
	// peer's config): BindingJSONRPC ("jsonrpc"), BindingREST ("rest"), or
	// "" to take the card's. A binding the card does not offer is an
	// error; ParseBinding reads the user's spelling.
	Binding Binding
}

// ResolveAgent is ResolveAgentWith for a caller that speaks JSON-RPC only
// (it does not pass RemoteAgent.Binding on to A2AConfig): the card's
// JSON-RPC interface, and a card that offers none (HTTP+JSON only, gRPC
// only) is refused as before bindings existed, saying what it offers.
// Callers that pass the binding on use ResolveAgentWith, which takes an
// HTTP+JSON-only agent too.
func ResolveAgent(ctx context.Context, hc *http.Client, rawURL, userAgent string) (*RemoteAgent, error) {
	return resolve(ctx, hc, rawURL, ResolveOptions{UserAgent: userAgent, Binding: BindingJSONRPC}, true)
}

// ResolveAgentWith fetches the agent card at or below rawURL and chooses
// how to talk to the agent, from the card, never from guesses: JSON-RPC
// first, A2A v1.0 when the card offers a JSON-RPC interface of protocol
// 1.x, else v0.3 through the card's url (or a JSON-RPC entry of
// additionalInterfaces or supportedInterfaces); when the card offers no
// JSON-RPC, its first HTTP+JSON interface of protocol 1.x (A2A 1.0 over
// HTTP+JSON). o.Binding overrides the choice of binding. A card that
// offers only gRPC (or HTTP+JSON of A2A 0.3) is refused, saying so.
// Cards are public: no credential is sent for them.
func ResolveAgentWith(ctx context.Context, hc *http.Client, rawURL string, o ResolveOptions) (*RemoteAgent, error) {
	return resolve(ctx, hc, rawURL, o, false)
}

// resolve is ResolveAgentWith; legacy words a refusal for a caller that
// never chose a binding.
func resolve(ctx context.Context, hc *http.Client, rawURL string, o ResolveOptions, legacy bool) (*RemoteAgent, error) {
	locs, err := CardLocations(rawURL)
	if err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: "get agent card", Message: err.Error()}
	}
	if o.Binding != "" && o.Binding != BindingJSONRPC && o.Binding != BindingREST {
		return nil, &Error{Kind: KindBadRequest, Op: "get agent card", Message: fmt.Sprintf("unknown A2A binding %q: use jsonrpc or rest", o.Binding)}
	}
	if hc == nil {
		hc = NewHTTPClient(nil)
	}
	var lastErr error
	for i, loc := range locs {
		card, err := fetchCard(ctx, hc, loc, o.UserAgent)
		if err == nil {
			ra, err := chooseInterface(card, loc, o.Binding)
			if err != nil && legacy {
				return nil, legacyRefusal(card, loc)
			}
			return ra, err
		}
		lastErr = err
		if !IsKind(err, KindNotFound) || i == len(locs)-1 {
			break
		}
	}
	return nil, lastErr
}

func fetchCard(ctx context.Context, hc *http.Client, loc, userAgent string) (Card, error) {
	u, _ := url.Parse(loc)
	base := &url.URL{Scheme: u.Scheme, Host: u.Host}
	t := &transport{http: hc, base: base, userAgent: userAgent, maxBody: DefaultMaxResponseBytes, budget: SharedReadBudget(), retries: 2,
		maxRetryWait: 20 * time.Second, sleep: SleepContext,
		// A hybrid server then answers with the pure v1.0 card.
		headers: map[string]string{"A2A-Version": string(V10)}}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	resp, err := t.do(ctx, &request{op: "get agent card " + loc, method: http.MethodGet, path: path, idempotent: true})
	if err != nil {
		return Card{}, err
	}
	if !gjson.GetBytes(resp.body, "name").Exists() {
		return Card{}, &Error{Kind: KindProtocol, Op: "get agent card " + loc, StatusCode: resp.status, Message: "the response is not an agent card (no name)"}
	}
	return Card{Raw: resp.body}, nil
}

// cardInterface is one interface of a card that the client can speak.
type cardInterface struct {
	url, tenant string
	dialect     Dialect
	binding     Binding
}

// cardInterfaces lists the interfaces of a card the client speaks, in the
// order ResolveAgent prefers them (JSON-RPC 1.x, JSON-RPC 0.3 by the v0.3
// fields, then by supportedInterfaces, then HTTP+JSON 1.x), and names
// every interface it offers ("GRPC 1.0", "HTTP+JSON 0.3") for messages.
func cardInterfaces(card Card) (usable []cardInterface, offered []string) {
	var rest []cardInterface
	var v03 []cardInterface
	card.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
		binding := strings.ToUpper(i.Get("protocolBinding").String())
		version := i.Get("protocolVersion").String()
		u := i.Get("url").String()
		offered = append(offered, strings.TrimSpace(binding+" "+version))
		if u == "" {
			return true
		}
		x := cardInterface{url: u, tenant: i.Get("tenant").String()}
		switch {
		case binding == "JSONRPC" && strings.HasPrefix(version, "1."):
			x.dialect, x.binding = V10, BindingJSONRPC
			usable = append(usable, x)
		case binding == "JSONRPC" && strings.HasPrefix(version, "0.3"):
			x.dialect, x.binding = V03, BindingJSONRPC
			v03 = append(v03, x)
		case binding == "HTTP+JSON" && strings.HasPrefix(version, "1."):
			x.dialect, x.binding = V10, BindingREST
			rest = append(rest, x)
		}
		return true
	})
	if u := card.Get("url").String(); u != "" {
		pt := strings.ToUpper(card.Get("preferredTransport").String())
		offered = append(offered, strings.TrimSpace(nonEmpty(pt, "JSONRPC")+" "+card.Get("protocolVersion").String()))
		if pt == "" || pt == "JSONRPC" {
			usable = append(usable, cardInterface{url: u, dialect: V03, binding: BindingJSONRPC})
		}
	}
	card.Get("additionalInterfaces").ForEach(func(_, i gjson.Result) bool {
		t := strings.ToUpper(i.Get("transport").String())
		offered = append(offered, strings.TrimSpace(t+" "+card.Get("protocolVersion").String()))
		if t == "JSONRPC" && i.Get("url").String() != "" {
			usable = append(usable, cardInterface{url: i.Get("url").String(), dialect: V03, binding: BindingJSONRPC})
		}
		return true
	})
	usable = append(append(usable, v03...), rest...)
	return usable, offered
}

func chooseInterface(card Card, cardURL string, prefer Binding) (*RemoteAgent, error) {
	op := "read agent card " + cardURL
	ra := &RemoteAgent{Card: card, CardURL: cardURL, Streaming: card.Get("capabilities.streaming").Bool()}
	usable, offered := cardInterfaces(card)
	var pick *cardInterface
	for i := range usable {
		if prefer == "" || usable[i].binding == prefer {
			pick = &usable[i]
			break
		}
	}
	if pick == nil {
		return nil, &Error{Kind: KindProtocol, Op: op, Message: noInterfaceMessage(prefer, len(usable) > 0, offered), Err: ErrNoInterface}
	}
	ra.Endpoint, ra.Dialect, ra.Binding, ra.Tenant = pick.url, pick.dialect, pick.binding, pick.tenant
	ep, err := url.Parse(ra.Endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return nil, &Error{Kind: KindProtocol, Op: op, Message: fmt.Sprintf("the card's endpoint %q is not an http(s) URL", ra.Endpoint)}
	}
	cu, _ := url.Parse(cardURL)
	ra.Moved = !sameOriginLoose(ep, cu)
	ra.Auth = cardAuth(card)
	return ra, nil
}

// legacyRefusal is ResolveAgent's refusal of a card with no JSON-RPC
// interface.
func legacyRefusal(card Card, cardURL string) error {
	usable, offered := cardInterfaces(card)
	msg := noInterfaceMessage("", false, offered)
	if len(usable) > 0 {
		msg = "the card offers no JSON-RPC interface of A2A 0.3 or 1.x (it offers " + oneLine(strings.Join(offered, ", "), 200) + "); HTTP+JSON is not spoken here"
	}
	return &Error{Kind: KindProtocol, Op: "read agent card " + cardURL, Message: msg, Err: ErrNoInterface}
}

// noInterfaceMessage says why a card gives nothing to speak to.
func noInterfaceMessage(prefer Binding, other bool, offered []string) string {
	list := ""
	if len(offered) > 0 {
		list = " (it offers " + oneLine(strings.Join(offered, ", "), 200) + ")"
	}
	switch {
	case prefer == BindingREST && other:
		return "the card offers no HTTP+JSON interface of A2A 1.x" + list + "; drop the binding choice to use JSON-RPC"
	case prefer == BindingJSONRPC && other:
		return "the card offers no JSON-RPC interface of A2A 0.3 or 1.x" + list + "; drop the binding choice to use HTTP+JSON"
	}
	grpc := len(offered) > 0
	for _, o := range offered {
		grpc = grpc && strings.HasPrefix(o, "GRPC")
	}
	if grpc {
		return "gRPC is not supported: the agent offers no JSON-RPC or HTTP+JSON interface" + list
	}
	return "the card offers no JSON-RPC interface of A2A 0.3 or 1.x, nor an HTTP+JSON interface of A2A 1.x" + list + " (gRPC, and HTTP+JSON of A2A 0.3, are not supported)"
}

// Use switches to dialect d (a --protocol the user gave). It takes the
// card's interface of that version in the current binding when it offers
// one, else its JSON-RPC interface of that version (A2A 0.3 is not spoken
// over HTTP+JSON), and reports whether it did; otherwise the card's
// endpoint is kept and spoken to in d, as asked (over JSON-RPC for 0.3).
func (r *RemoteAgent) Use(d Dialect) (offered bool) {
	if r.Dialect == d {
		return true
	}
	x, ok := r.find(d, r.Binding.orDefault())
	if !ok {
		x, ok = r.find(d, BindingJSONRPC)
	}
	r.Dialect = d
	if !ok {
		if d == V03 {
			r.Binding = BindingJSONRPC
		}
		return false
	}
	r.Endpoint, r.Tenant, r.Binding = x.url, x.tenant, x.binding
	if ep, err := url.Parse(x.url); err == nil {
		if cu, err := url.Parse(r.CardURL); err == nil {
			r.Moved = !sameOriginLoose(ep, cu)
		}
	}
	return true
}

// find looks for the card's interface of dialect d in binding b: in
// supportedInterfaces, then for 0.3 JSON-RPC in a v0.3 card's url and
// additionalInterfaces.
func (r *RemoteAgent) find(d Dialect, b Binding) (cardInterface, bool) {
	if b == BindingREST && d != V10 {
		return cardInterface{}, false
	}
	prefix := "1."
	if d == V03 {
		prefix = "0.3"
	}
	var out cardInterface
	r.Card.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
		if strings.ToUpper(i.Get("protocolBinding").String()) == b.CardName() && strings.HasPrefix(i.Get("protocolVersion").String(), prefix) && i.Get("url").String() != "" {
			out = cardInterface{url: i.Get("url").String(), tenant: i.Get("tenant").String(), dialect: d, binding: b}
			return false
		}
		return true
	})
	if out.url == "" && d == V03 {
		if u := r.Card.Get("url").String(); u != "" && r.Card.Get("protocolVersion").Exists() {
			if pt := strings.ToUpper(r.Card.Get("preferredTransport").String()); pt == "" || pt == "JSONRPC" {
				out = cardInterface{url: u, dialect: V03, binding: BindingJSONRPC}
			}
		}
	}
	if out.url == "" && d == V03 {
		r.Card.Get("additionalInterfaces").ForEach(func(_, i gjson.Result) bool {
			if strings.ToUpper(i.Get("transport").String()) == "JSONRPC" && i.Get("url").String() != "" {
				out = cardInterface{url: i.Get("url").String(), dialect: V03, binding: BindingJSONRPC}
				return false
			}
			return true
		})
	}
	if ep, err := url.Parse(out.url); out.url == "" || err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return cardInterface{}, false
	}
	return out, true
}

// sameOriginLoose is SameOrigin, with every loopback name equal to every
// other: SDK servers put "localhost" in cards served on 127.0.0.1.
func sameOriginLoose(a, b *url.URL) bool {
	if SameOrigin(a, b) {
		return true
	}
	loop := func(h string) bool {
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return loop(a.Hostname()) && loop(b.Hostname()) && a.Port() == b.Port() && strings.EqualFold(a.Scheme, b.Scheme)
}

// cardAuth reads the first usable security scheme: HTTP bearer, or an API
// key in a header. It accepts the v0.3 form, the v1.0 form and the
// $case form some SDKs emit.
func cardAuth(card Card) Auth {
	var out Auth
	card.Get("securitySchemes").ForEach(func(_, s gjson.Result) bool {
		body := s
		switch {
		case s.Get("httpAuthSecurityScheme").Exists():
			body = s.Get("httpAuthSecurityScheme")
			body = gjson.Parse(`{"type":"http","scheme":` + quoteJSON(body.Get("scheme").String()) + `}`)
		case s.Get("apiKeySecurityScheme").Exists():
			k := s.Get("apiKeySecurityScheme")
			body = gjson.Parse(`{"type":"apiKey","in":` + quoteJSON(nonEmpty(k.Get("location").String(), k.Get("in").String())) + `,"name":` + quoteJSON(k.Get("name").String()) + `}`)
		case s.Get("scheme.$case").Exists():
			v := s.Get("scheme.value")
			switch s.Get("scheme.$case").String() {
			case "httpAuthSecurityScheme":
				body = gjson.Parse(`{"type":"http","scheme":` + quoteJSON(v.Get("scheme").String()) + `}`)
			case "apiKeySecurityScheme":
				body = gjson.Parse(`{"type":"apiKey","in":` + quoteJSON(nonEmpty(v.Get("location").String(), v.Get("in").String())) + `,"name":` + quoteJSON(v.Get("name").String()) + `}`)
			}
		}
		switch strings.ToLower(body.Get("type").String()) {
		case "http":
			if strings.EqualFold(body.Get("scheme").String(), "bearer") {
				out = Auth{Header: "Authorization", Prefix: "Bearer ", Scheme: "bearer"}
				return false
			}
		case "apikey":
			in := strings.ToLower(body.Get("in").String())
			if (in == "header" || in == "") && body.Get("name").String() != "" {
				out = Auth{Header: body.Get("name").String(), Scheme: "apiKey"}
				return false
			}
		}
		return true
	})
	return out
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
