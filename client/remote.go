package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Dialect is the A2A protocol version spoken to an agent.
type Dialect string

// The dialects the client speaks.
const (
	V03 Dialect = "0.3"
	V10 Dialect = "1.0"
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
// JSON-RPC requests, in which dialect, and how to authenticate.
type RemoteAgent struct {
	Card     Card
	CardURL  string
	Endpoint string
	Dialect  Dialect
	Tenant   string
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

// ResolveAgent fetches the agent card at or below rawURL and chooses how to
// talk to the agent: A2A v1.0 when the card offers a JSON-RPC interface of
// protocol 1.x, else v0.3 through the card's url (JSON-RPC). The choice
// comes from the card, never from guesses. Cards are public: no credential
// is sent for them.
func ResolveAgent(ctx context.Context, hc *http.Client, rawURL, userAgent string) (*RemoteAgent, error) {
	locs, err := CardLocations(rawURL)
	if err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: "get agent card", Message: err.Error()}
	}
	if hc == nil {
		hc = NewHTTPClient(nil)
	}
	var lastErr error
	for i, loc := range locs {
		card, err := fetchCard(ctx, hc, loc, userAgent)
		if err == nil {
			ra, err := chooseInterface(card, loc)
			if err != nil {
				return nil, err
			}
			return ra, nil
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

func chooseInterface(card Card, cardURL string) (*RemoteAgent, error) {
	op := "read agent card " + cardURL
	ra := &RemoteAgent{Card: card, CardURL: cardURL, Streaming: card.Get("capabilities.streaming").Bool()}
	card.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
		binding := strings.ToUpper(i.Get("protocolBinding").String())
		version := i.Get("protocolVersion").String()
		if binding == "JSONRPC" && strings.HasPrefix(version, "1.") && i.Get("url").String() != "" {
			ra.Endpoint, ra.Dialect, ra.Tenant = i.Get("url").String(), V10, i.Get("tenant").String()
			return false
		}
		return true
	})
	if ra.Endpoint == "" {
		if u := card.Get("url").String(); u != "" {
			pt := strings.ToUpper(card.Get("preferredTransport").String())
			if pt == "" || pt == "JSONRPC" {
				ra.Endpoint, ra.Dialect = u, V03
			}
		}
	}
	if ra.Endpoint == "" {
		card.Get("additionalInterfaces").ForEach(func(_, i gjson.Result) bool {
			if strings.ToUpper(i.Get("transport").String()) == "JSONRPC" && i.Get("url").String() != "" {
				ra.Endpoint, ra.Dialect = i.Get("url").String(), V03
				return false
			}
			return true
		})
	}
	if ra.Endpoint == "" {
		// A v0.3 interface listed in supportedInterfaces (a2a-js cards list
		// both versions there).
		card.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
			if strings.ToUpper(i.Get("protocolBinding").String()) == "JSONRPC" && strings.HasPrefix(i.Get("protocolVersion").String(), "0.3") {
				ra.Endpoint, ra.Dialect, ra.Tenant = i.Get("url").String(), V03, i.Get("tenant").String()
				return false
			}
			return true
		})
	}
	if ra.Endpoint == "" {
		return nil, &Error{Kind: KindProtocol, Op: op, Message: "the card offers no JSON-RPC interface of A2A 0.3 or 1.x (gRPC and HTTP+JSON are not supported)"}
	}
	ep, err := url.Parse(ra.Endpoint)
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return nil, &Error{Kind: KindProtocol, Op: op, Message: fmt.Sprintf("the card's endpoint %q is not an http(s) URL", ra.Endpoint)}
	}
	cu, _ := url.Parse(cardURL)
	ra.Moved = !sameOriginLoose(ep, cu)
	ra.Auth = cardAuth(card)
	return ra, nil
}

// Use switches to dialect d (a --protocol the user gave). It takes the
// card's JSON-RPC interface of that version when it offers one, and
// reports whether it did; otherwise the card's endpoint is kept and spoken
// to in d, as asked.
func (r *RemoteAgent) Use(d Dialect) (offered bool) {
	if r.Dialect == d {
		return true
	}
	prefix := "1."
	if d == V03 {
		prefix = "0.3"
	}
	endpoint, tenant := "", ""
	r.Card.Get("supportedInterfaces").ForEach(func(_, i gjson.Result) bool {
		if strings.ToUpper(i.Get("protocolBinding").String()) == "JSONRPC" && strings.HasPrefix(i.Get("protocolVersion").String(), prefix) && i.Get("url").String() != "" {
			endpoint, tenant = i.Get("url").String(), i.Get("tenant").String()
			return false
		}
		return true
	})
	if endpoint == "" && d == V03 {
		if u := r.Card.Get("url").String(); u != "" && r.Card.Get("protocolVersion").Exists() {
			pt := strings.ToUpper(r.Card.Get("preferredTransport").String())
			if pt == "" || pt == "JSONRPC" {
				endpoint = u
			}
		}
	}
	if endpoint == "" && d == V03 {
		r.Card.Get("additionalInterfaces").ForEach(func(_, i gjson.Result) bool {
			if strings.ToUpper(i.Get("transport").String()) == "JSONRPC" && i.Get("url").String() != "" {
				endpoint = i.Get("url").String()
				return false
			}
			return true
		})
	}
	r.Dialect = d
	if endpoint == "" {
		return false
	}
	if ep, err := url.Parse(endpoint); err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return false
	}
	r.Endpoint, r.Tenant = endpoint, tenant
	if ep, err := url.Parse(endpoint); err == nil {
		if cu, err := url.Parse(r.CardURL); err == nil {
			r.Moved = !sameOriginLoose(ep, cu)
		}
	}
	return true
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
