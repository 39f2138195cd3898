package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client/ids"
	"github.com/tidwall/gjson"
)

// KibanaConfig says where a Kibana is and how to talk to it.
type KibanaConfig struct {
	// URL is the Kibana origin, with its base path if Kibana has one
	// (server.basePath); never the Elasticsearch URL.
	URL string
	// Space is the Kibana space; "" and "default" mean the default space.
	Space string
	// APIKey is the "encoded" value Elasticsearch returns for an API key
	// (base64 of id:key). An "id:key" pair or an "ApiKey …" header value
	// is accepted and normalised.
	APIKey Secret
	// HTTPClient defaults to NewHTTPClient(nil).
	HTTPClient *http.Client
	// UserAgent is sent on every request.
	UserAgent string
	// MaxResponseBytes caps ordinary responses (default 32 MiB).
	MaxResponseBytes int64
	// MaxConversationBytes caps a conversation document, decoded (default
	// 256 MiB, DefaultMaxConversationBytes).
	MaxConversationBytes int64
	// ReadBudget bounds the bytes that response reads hold at once; nil
	// means SharedReadBudget(), shared by every client of the process.
	ReadBudget *ReadBudget
	// Retries is the number of extra attempts for reads met by 429, 503 or
	// a broken connection (default 2; negative means none).
	Retries int
	// MaxRetryWait bounds one wait between attempts (default 20s); a
	// Retry-After beyond it is reported instead of waited for.
	MaxRetryWait time.Duration
}

// Kibana is a client for Kibana Agent Builder: its REST API and its A2A
// JSON-RPC endpoint. Every URL is built from the configured origin; the
// card's own url is never followed.
type Kibana struct {
	t     *transport
	space string
	maxCV int64
}

// NewKibana validates cfg and returns a client.
func NewKibana(cfg KibanaConfig) (*Kibana, error) {
	base, err := ParseKibanaURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	space := strings.TrimSpace(cfg.Space)
	if space == "default" {
		space = ""
	}
	if space != "" && !ValidSpace(space) {
		return nil, fmt.Errorf("invalid Kibana space id %q: use lower-case letters, digits, '-' and '_'", space)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(nil)
	}
	t := &transport{
		http:         hc,
		base:         base,
		authName:     "Authorization",
		userAgent:    cfg.UserAgent,
		headers:      map[string]string{"elastic-api-version": "2023-10-31"},
		maxBody:      cfg.MaxResponseBytes,
		budget:       cfg.ReadBudget,
		retries:      cfg.Retries,
		maxRetryWait: cfg.MaxRetryWait,
		sleep:        SleepContext,
	}
	if key := NormalizeAPIKey(cfg.APIKey.Reveal()); key != "" {
		t.authValue, t.secret = Secret("ApiKey "+key), Secret(key)
	}
	if t.maxBody <= 0 {
		t.maxBody = DefaultMaxResponseBytes
	}
	if t.budget == nil {
		t.budget = SharedReadBudget()
	}
	switch {
	case t.retries == 0:
		t.retries = 2
	case t.retries < 0:
		t.retries = 0
	}
	if t.maxRetryWait <= 0 {
		t.maxRetryWait = 20 * time.Second
	}
	maxCV := cfg.MaxConversationBytes
	if maxCV <= 0 {
		maxCV = DefaultMaxConversationBytes
	}
	return &Kibana{t: t, space: space, maxCV: maxCV}, nil
}

// ValidSpace reports whether s is a well-formed Kibana space id: 1 to 128
// of lower-case letters, digits, '-' and '_'. Checks are written out rather
// than as regular expressions with bounded repetition, whose compilation
// every command paid for at start-up.
func ValidSpace(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ParseKibanaURL checks a Kibana URL and returns it without a trailing
// slash, query or fragment. A trailing /s/<space> or /app/… path copied from
// the browser is rejected with advice, since the space has its own setting.
func ParseKibanaURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("the Kibana URL is empty")
	}
	if strings.Contains(raw, "@") {
		// user:password@host, however the password reads (one that looks
		// like a port and a path parses without a User): Kibana takes an
		// API key, and no Kibana address holds an '@'.
		return nil, errors.New("the Kibana URL must not carry a user name or password (it holds an '@'); use an API key")
	}
	if !strings.Contains(raw, "://") {
		// Without a scheme, url.Parse reads "host:port" as a scheme and
		// an opaque part ("localhost:5601"), or fails on an IP address
		// ("first path segment in URL cannot contain colon").
		return nil, fmt.Errorf("the Kibana URL %q must start with https:// or http://", redactRawURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the Kibana URL does not parse: %v", redactParseError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("the Kibana URL %q must start with https:// or http://", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("the Kibana URL %q has no host", u.Redacted())
	}
	if u.User != nil {
		return nil, errors.New("the Kibana URL must not carry a user name or password; use an API key")
	}
	p := strings.TrimRight(u.Path, "/")
	if i := strings.Index(p+"/", "/s/"); i >= 0 {
		return nil, fmt.Errorf("the Kibana URL %q includes a space path (/s/…); give the space separately (KIBANA_SPACE_ID)", u.Redacted())
	}
	if i := strings.Index(p+"/", "/app/"); i >= 0 {
		return nil, fmt.Errorf("the Kibana URL %q is a page address; use the Kibana origin, e.g. %s://%s", u.Redacted(), u.Scheme, u.Host)
	}
	u.Path = p
	u.RawPath = ""
	u.RawQuery = ""
	u.Fragment = ""
	return u, nil
}

// KibanaOrigin names a Kibana by its URL: the scheme and host in lower
// case and the base path, as ParseKibanaURL reads them, so that two ways of
// writing one Kibana's URL compare equal. A URL that does not parse is
// returned redacted (it may carry a password): it equals nothing else.
func KibanaOrigin(raw string) string {
	u, err := ParseKibanaURL(raw)
	if err != nil {
		return RedactURL(raw)
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + u.Path
}

// redactRawURL hides the user name and password of a URL that could not
// be parsed as one, for a message.
//
// A password may hold '/', '?', '#' or '@', so everything from the
// scheme to the last '@' of the whole string goes: a path with an '@' is
// hidden too, which costs an error message some detail, never a secret.
func redactRawURL(raw string) string {
	start := 0
	if i := strings.Index(raw, "://"); i > 0 && validScheme(raw[:i]) {
		start = i + 3
	}
	if i := strings.LastIndex(raw, "@"); i >= start {
		return raw[:start] + "…@" + raw[i+1:]
	}
	return raw
}

// RedactURL returns a URL fit for messages: without user name and
// password, whether or not it parses (a password that looks like a port
// and a path parses without a User, so any '@' means redactRawURL).
func RedactURL(raw string) string {
	if strings.Contains(raw, "@") {
		return redactRawURL(raw)
	}
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
		return u.Redacted()
	}
	return raw
}

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func validScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// redactParseError drops the URL from a parse error: it may carry a
// password.
func redactParseError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if strings.ContainsAny(ue.Err.Error(), "\"'`") {
			// url.Parse's own words may quote part of the authority, a
			// password's included ("invalid port \":hun\" after host"):
			// say less.
			return "it is not a valid URL (check the host, the port and the characters used)"
		}
		return ue.Err.Error()
	}
	return err.Error()
}

// NormalizeAPIKey accepts the forms people paste: the encoded key, "ApiKey
// <encoded>", or "id:key", and returns the encoded form.
func NormalizeAPIKey(key string) string {
	key = strings.TrimSpace(key)
	if len(key) > 7 && strings.EqualFold(key[:7], "apikey ") {
		key = strings.TrimSpace(key[7:])
	}
	if strings.Contains(key, ":") {
		key = base64Std(key)
	}
	return key
}

// Space returns the configured space ("" for the default space).
func (k *Kibana) Space() string { return k.space }

func (k *Kibana) apiPath(format string, ids ...string) string {
	esc := make([]any, len(ids))
	for i, id := range ids {
		esc[i] = url.PathEscape(id)
	}
	p := fmt.Sprintf(format, esc...)
	if k.space != "" {
		p = "/s/" + url.PathEscape(k.space) + p
	}
	return p
}

// apiPathRaw is apiPath unescaped, for a url.URL's Path: prefix + id,
// below the space.
func (k *Kibana) apiPathRaw(prefix, id string) string {
	p := prefix + id
	if k.space != "" {
		p = "/s/" + k.space + p
	}
	return p
}

// ValidID reports whether id is safe to place in a URL path or a file name:
// agent ids, conversation ids and context ids are 1 to 255 of letters,
// digits and . _ ~ : @ + -, not starting with '.' or ':', so no slashes, no
// dot segments, no whitespace or control characters. Anything else is
// refused before it can reach a URL path or a file name.
func ValidID(id string) bool { return ids.Valid(id, 255) }

// CheckID returns an error naming what is wrong with id, or nil.
func CheckID(what, id string) error {
	if id == "" {
		return fmt.Errorf("the %s is empty", what)
	}
	if !ValidID(id) {
		return fmt.Errorf("invalid %s %q: use letters, digits and . _ ~ : @ + - (at most 255, not starting with '.')", what, oneLine(id, 60))
	}
	return nil
}

// Agent is one entry of the agents list.
type Agent struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ListAgents returns the agents of the configured space, sorted by id.
func (k *Kibana) ListAgents(ctx context.Context) ([]Agent, error) {
	const op = "list agents"
	resp, err := k.t.do(ctx, &request{op: op, method: http.MethodGet, path: k.apiPath("/api/agent_builder/agents"), idempotent: true})
	if err != nil {
		return nil, err
	}
	results := gjson.Get(unsafeString(resp.body), "results")
	if !results.IsArray() {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the response has no results list"}
	}
	var agents []Agent
	results.ForEach(func(_, a gjson.Result) bool {
		id := a.Get("id").String()
		if id == "" {
			return true
		}
		agents = append(agents, Agent{ID: id, Name: a.Get("name").String(), Description: a.Get("description").String()})
		return true
	})
	sort.Slice(agents, func(i, j int) bool { return agents[i].ID < agents[j].ID })
	return agents, nil
}

// Card is an agent card as the server sent it.
type Card struct {
	// Raw is the card document, unchanged.
	Raw []byte
	// MaxAge is how long the server says the card may be reused
	// (Cache-Control max-age; Kibana sends an hour), 0 when it says nothing.
	MaxAge time.Duration
}

// cacheMaxAge reads max-age from a Cache-Control header.
func cacheMaxAge(h http.Header) time.Duration {
	for _, part := range strings.Split(h.Get("Cache-Control"), ",") {
		part = strings.TrimSpace(part)
		if strings.EqualFold(part, "no-store") || strings.EqualFold(part, "no-cache") {
			return 0
		}
		if v, ok := strings.CutPrefix(strings.ToLower(part), "max-age="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return time.Duration(min(n, 86400)) * time.Second
			}
		}
	}
	return 0
}

// Get reads one field of the card with a gjson path.
func (c Card) Get(path string) gjson.Result { return gjson.GetBytes(c.Raw, path) }

// AgentCard fetches the A2A agent card of one agent.
func (k *Kibana) AgentCard(ctx context.Context, agentID string) (Card, error) {
	op := "get card of agent " + agentID
	if err := CheckID("agent id", agentID); err != nil {
		return Card{}, &Error{Kind: KindBadRequest, Op: op, Message: err.Error()}
	}
	resp, err := k.t.do(ctx, &request{op: op, method: http.MethodGet, path: k.apiPath("/api/agent_builder/a2a/%s.json", agentID), idempotent: true})
	if err != nil {
		return Card{}, err
	}
	if !gjson.GetBytes(resp.body, "name").Exists() {
		return Card{}, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the response is not an agent card (no name)"}
	}
	return Card{Raw: resp.body, MaxAge: cacheMaxAge(resp.header)}, nil
}

// OutgoingMessage is one user message for message/send.
type OutgoingMessage struct {
	// Text is sent as the first part; with Parts and no Text, no text
	// part is sent.
	Text      string
	MessageID string
	ContextID string
	// TaskID answers a task that asked for input (generic A2A servers
	// only; Agent Builder's per-request task store cannot find one).
	TaskID string
	// Blocking is sent explicitly as configuration.blocking.
	Blocking bool
	// Parts follow the text: files (FilePart, FilePartFromPath) and data
	// (DataPart), encoded as the dialect says. Generic A2A agents only:
	// Agent Builder takes text, and a Kibana send with parts is refused
	// before anything is sent (ErrTextOnly).
	Parts []Part
}

// ErrTextOnly is wrapped by the error of a Kibana send whose message has
// parts beside its text: Agent Builder agents take text only.
var ErrTextOnly = errors.New("Agent Builder agents take text only: files and data parts are for generic A2A agents")

func textOnly(op string, m OutgoingMessage) error {
	if len(m.Parts) == 0 {
		return nil
	}
	return &Error{Kind: KindBadRequest, Op: op, Message: ErrTextOnly.Error(), Err: ErrTextOnly}
}

// SendMessage posts message/send to the agent's A2A endpoint once. It never
// retries: a second POST would run the agent a second time.
func (k *Kibana) SendMessage(ctx context.Context, agentID string, m OutgoingMessage) (*SendResult, error) {
	op := "send message to agent " + agentID
	if err := CheckID("agent id", agentID); err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: op, Message: err.Error()}
	}
	if err := textOnly(op, m); err != nil {
		return nil, err
	}
	body, reqID, err := encodeSendV03(m)
	if err != nil {
		return nil, &Error{Kind: KindUnexpected, Op: op, Err: err}
	}
	resp, err := k.t.do(ctx, &request{op: op, method: http.MethodPost, path: k.apiPath("/api/agent_builder/a2a/%s", agentID), body: body,
		heldOpen: m.Blocking})
	if err != nil {
		return nil, err
	}
	res, err := decodeSendV03(op, resp, reqID)
	return res, k.t.redact(err)
}

// Conversation is one stored conversation document, read lazily with gjson
// so that a document of hundreds of megabytes is held once and never decoded
// into Go values beyond the fields asked for.
type Conversation struct {
	raw []byte
	s   string // unsafe view of raw
}

// NewConversation wraps a raw conversation document.
func NewConversation(raw []byte) *Conversation { return &Conversation{raw: raw, s: unsafeString(raw)} }

// Size is the document's size in bytes.
func (c *Conversation) Size() int { return len(c.raw) }

// ID, Title, AgentID, UpdatedAt and CreatedAt read top-level fields.
func (c *Conversation) ID() string        { return gjson.Get(c.s, "id").String() }
func (c *Conversation) Title() string     { return gjson.Get(c.s, "title").String() }
func (c *Conversation) AgentID() string   { return gjson.Get(c.s, "agent_id").String() }
func (c *Conversation) UpdatedAt() string { return gjson.Get(c.s, "updated_at").String() }
func (c *Conversation) CreatedAt() string { return gjson.Get(c.s, "created_at").String() }

// Round is what the client keeps of a conversation round: its input and its
// final reply. Reasoning, tool calls and tool results are never extracted.
type Round struct {
	Index    int
	ID       string
	Input    string
	Response string
	// Status is "" before Kibana's HITL change, then in_progress,
	// completed or awaiting_prompt.
	Status    string
	StartedAt string
	// HasResponse reports whether response.message exists.
	HasResponse bool
	// Prompt is the question of a round awaiting a prompt (HITL).
	Prompt string
	// Interruption is "failed" or "aborted" for the round of a run that
	// did not complete (Kibana's newest rounds model keeps them, with an
	// empty response and status completed); InterruptionReason is the
	// error's message, or where the abort came from (api, task_manager,
	// caller).
	Interruption       string
	InterruptionReason string
	// Malformed says why the round is in a shape no Kibana writes (not an
	// object, no response, a response that is not text); empty for a
	// well-formed round.
	Malformed string
}

// RoundCount returns the number of rounds.
func (c *Conversation) RoundCount() int {
	return c.eachRoundRaw(func(int, string) bool { return true })
}

// GetConversation reads one conversation of the caller's own, in the
// configured space. A conversation that does not exist yet gives KindNotFound.
func (k *Kibana) GetConversation(ctx context.Context, id string) (*Conversation, error) {
	op := "get conversation " + id
	if err := CheckID("conversation id", id); err != nil {
		return nil, &Error{Kind: KindBadRequest, Op: op, Message: err.Error()}
	}
	resp, err := k.t.do(ctx, &request{op: op, method: http.MethodGet, path: k.apiPath("/api/agent_builder/conversations/%s", id),
		idempotent: true, maxBody: k.maxCV, quickCheckAbove: quickCheckConversationBytes})
	if err != nil {
		return nil, err
	}
	c := NewConversation(resp.body)
	if !gjson.Get(c.s, "id").Exists() {
		if nestsTooDeep(c.s) {
			return nil, tooDeepError(op, resp.status)
		}
		if !gjson.ValidBytes(resp.body) {
			return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the response is truncated or malformed JSON"}
		}
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the response is not a conversation (no id)"}
	}
	return c, nil
}

// ConversationIDForContext maps an A2A contextId to the conversation Kibana
// stores it under.
func ConversationIDForContext(contextID string) string { return "a2a-" + contextID }
