// Package agentbuildertest is a local simulator of Kibana Agent Builder's A2A
// server and conversation store, in the spirit of net/http/httptest. It
// reproduces Kibana 9.2 to 9.6 as the project's reference describes them
// (docs/simulator.md): routes with and without /s/<space>, API keys mapped to
// owners, conversations written only when a round completes, agents that run
// for a while, call tools and fail, and faults: a proxy that answers 502 while
// the run goes on, Kibana's idle close, slow responses and injected statuses.
//
// Use NewServer in tests, or Listen for a server on a chosen address (the
// a2a-courier dev-server command).
package agentbuildertest

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Version names a Kibana release line whose behaviour the simulator imitates.
type Version string

// Supported versions.
const (
	V92 Version = "9.2"
	V93 Version = "9.3"
	V94 Version = "9.4"
	V95 Version = "9.5"
	V96 Version = "9.6"
	// VServerless is Elastic Cloud Serverless, which runs Kibana's newest
	// code: every switch as in 9.6, and /api/status says build_flavor
	// "serverless".
	VServerless Version = "serverless"
)

// DefaultVersion is the version imitated when Options.Version is empty.
const DefaultVersion = V95

// Options configures a simulator. The zero value is a 9.5 Kibana with no
// agents and no keys; DemoOptions gives a ready-made one.
type Options struct {
	// Version selects the defaults of the switches below.
	Version Version `yaml:"version"`

	// RoundStatus adds the HITL round status field (in_progress, completed,
	// awaiting_prompt). Default: on from 9.4.
	RoundStatus *bool `yaml:"round_status"`
	// PrecreateEmpty imitates the variant that creates an empty
	// conversation titled "[A2A] a2a-<ctx>" before the run, so a reader sees
	// 200 with no rounds instead of 404 while the run goes on.
	PrecreateEmpty bool `yaml:"precreate_empty"`
	// PaginatedList gives the 9.6 conversation list (pagination envelope,
	// page/per_page/sort_order). Default: on from 9.6.
	PaginatedList *bool `yaml:"paginated_list"`
	// CardURLWithSpace puts /s/<space> in the card's url. Default: on from 9.3.
	CardURLWithSpace *bool `yaml:"card_url_with_space"`
	// AgentNotFound404 answers an unknown agent with 404; 9.2 answers 500.
	// Default: on from 9.3.
	AgentNotFound404 *bool `yaml:"agent_not_found_404"`
	// AgentBuilderDisabled imitates Agent Builder switched off: every
	// agent_builder route answers 404.
	AgentBuilderDisabled bool `yaml:"agent_builder_disabled"`
	// PublicBaseURL is what the card's url starts with (Kibana's
	// server.publicBaseUrl); default: the address the request came to.
	PublicBaseURL string `yaml:"public_base_url"`
	// DisableGzip stops gzip responses; by default, as Kibana does, bodies
	// over 1 KiB are compressed when the client accepts gzip.
	DisableGzip bool `yaml:"disable_gzip"`
	// MaxBodyBytes is Kibana's request size limit (default 1 MiB, 413 above).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`

	Agents []Agent `yaml:"agents"`
	Keys   []Key   `yaml:"keys"`
	Faults Faults  `yaml:"faults"`

	// DataFile, when set, keeps conversations and run counts in this file
	// across restarts of the simulator.
	DataFile string `yaml:"data_file"`

	// Logf, when set, receives one line per request and per run.
	Logf func(format string, args ...any) `yaml:"-"`
	// Now returns the current time (default time.Now).
	Now func() time.Time `yaml:"-"`

	// Seed lists conversations stored at start without running agents
	// (seed.go): large documents for benchmarks and tests.
	Seed []SeedConversation `yaml:"seed"`

	// NonBlockingTasks imitates Kibana's KibanaTaskStore (tasks.go):
	// message/send with configuration.blocking:false answers at once with a
	// working Task, and tasks/get finds that task (in the same space) until
	// and after it ends. Blocking sends keep answering a Message whose
	// taskId nothing finds. Default: on from 9.6.
	NonBlockingTasks *bool `yaml:"non_blocking_tasks"`
	// Streaming makes the card say capabilities.streaming:true and serves
	// message/stream over SSE (stream.go). Default: off in every version,
	// as no released card says true.
	Streaming *bool `yaml:"streaming"`
	// StreamKeepAlive is how often a stream sends a ": keep-alive" comment
	// (Kibana: 10 s, the default).
	StreamKeepAlive time.Duration `yaml:"stream_keep_alive"`
	// AbortOnDisconnect aborts a run whose blocking message/send, or whose
	// message/stream (blocking or not), ends before the answer (client
	// gone, proxy cut, idle close, the client's own timeout): nothing is
	// stored and its task, if any, is canceled. Only a non-streaming
	// blocking:false send belongs to Task Manager and goes on. Kibana's
	// newest adapter subscribes to the request's aborted$ and passes the
	// signal to the run (docs/simulator.md). Default: on from 9.6.
	AbortOnDisconnect *bool `yaml:"abort_on_disconnect"`
	// ConversationAtReceipt creates the conversation a2a-<ctx> when the
	// request arrives, before the run ends, as the newest execution
	// service does (it persists the user's message first): a reader sees
	// 200 with fewer rounds than expected while the run goes on, and for
	// ever after it failed. Default: on from 9.6.
	ConversationAtReceipt *bool `yaml:"conversation_at_receipt"`
	// InterruptedRounds makes a failed or aborted run form a round, as the
	// newest rounds model (events_to_rounds.ts) does: status completed, an
	// empty response and interruption {type: failed, error: {code,
	// message}} or {type: aborted}. At PR #291846 (9.6.0) such runs formed
	// no round. Default: on for serverless only.
	InterruptedRounds *bool `yaml:"interrupted_rounds"`
	// StaleUpdatedAt imitates the onechat-era converter (9.2, 9.3), which
	// wrote updatedAt instead of updated_at, so a conversation's updated_at
	// never moves forward on follow-up rounds. Default: on in 9.2 and 9.3.
	StaleUpdatedAt *bool `yaml:"stale_updated_at"`
	// StatusNumber is the version.number GET /api/status answers; default
	// a release of Version (serverless: the newest).
	StatusNumber string `yaml:"status_number"`
}

// Agent is a simulated agent and how its runs behave.
type Agent struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Space is the Kibana space the agent lives in; "" is the default space.
	Space        string   `yaml:"space"`
	Tools        []string `yaml:"tools"`
	Instructions string   `yaml:"instructions"`
	Readonly     bool     `yaml:"readonly"`

	// Reply is the final answer; "{{input}}" is replaced by the message.
	// Default: "Echo: {{input}}".
	Reply string `yaml:"reply"`
	// ReplyBytes pads the reply to at least this many bytes.
	ReplyBytes int `yaml:"reply_bytes"`
	// RunTime is how long a run takes before the round completes.
	RunTime time.Duration `yaml:"run_time"`
	// ToolResultBytes is the size of each tool call's stored result; each
	// tool in Tools is called once per round.
	ToolResultBytes int `yaml:"tool_result_bytes"`
	// Fail makes every run fail with this reason: the reply is
	// "Error: <Fail>" and no round is written, as Kibana does.
	Fail string `yaml:"fail"`
	// AwaitPrompt (a string: the question) makes the first round of a
	// conversation stop on a confirmation prompt (HITL); the next round, the
	// answer, completes:
	// status awaiting_prompt when RoundStatus is on.
	AwaitPrompt string `yaml:"await_prompt"`
}

// Key is an API key the simulator accepts.
type Key struct {
	// APIKey is the encoded value a client sends as "ApiKey <APIKey>".
	APIKey string `yaml:"api_key"`
	// Username is the key owner; conversations belong to it.
	Username string `yaml:"username"`
	// Spaces lists the spaces the key may use ("default" for the default
	// space); empty means every space.
	Spaces []string `yaml:"spaces"`
}

// Faults are failures the simulator injects.
type Faults struct {
	// ProxyCutAfter answers an A2A POST still running after this long with
	// HTTP 502 and an HTML page, as a proxy does; the run goes on and its
	// round is stored.
	ProxyCutAfter time.Duration `yaml:"proxy_cut_after"`
	// ProxyBody is the 502 page; default a typical proxy page.
	ProxyBody string `yaml:"proxy_body"`
	// IdleCloseAfter drops the connection of an A2A POST that has sent
	// nothing for this long, as Kibana's idle socket timeout does (120 s).
	IdleCloseAfter time.Duration `yaml:"idle_close_after"`
	// ResponseDelay delays every response (slow responses).
	ResponseDelay time.Duration `yaml:"response_delay"`
	// ExtraRunTime is added to every run (slow rounds).
	ExtraRunTime time.Duration `yaml:"extra_run_time"`
	// ResetMidBody answers an A2A POST whose run completed with half of the
	// body and a connection reset; the round is stored.
	ResetMidBody bool `yaml:"reset_mid_body"`
	// NeverAnswer holds an A2A POST open without ever answering, even after
	// the run completed and its round was stored.
	NeverAnswer bool `yaml:"never_answer"`
	// StaleTaskReads makes the first N tasks/get of a run that ended still
	// read it working: the final round and the execution document are two
	// writes, and a reader can come between them.
	StaleTaskReads int `yaml:"stale_task_reads"`
	// FailRuns makes the next N runs fail, whatever the agent.
	FailRuns int `yaml:"fail_runs"`
	// FailReason is the reason those runs give.
	FailReason string `yaml:"fail_reason"`
	// Statuses injects HTTP statuses on chosen routes.
	Statuses []StatusFault `yaml:"statuses"`
}

// Routes named in StatusFault.Route.
const (
	RouteAgents        = "agents"        // GET /api/agent_builder/agents
	RouteCard          = "card"          // GET /api/agent_builder/a2a/{id}.json
	RouteA2A           = "a2a"           // POST /api/agent_builder/a2a/{id}
	RouteConversation  = "conversation"  // GET|DELETE /api/agent_builder/conversations/{id}
	RouteConversations = "conversations" // GET /api/agent_builder/conversations
	RouteStatus        = "status"        // GET /api/status
)

// StatusFault answers requests on Route with Status instead of handling them.
type StatusFault struct {
	Route  string `yaml:"route"`
	Status int    `yaml:"status"`
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string `yaml:"retry_after"`
	// Body is sent as is; default a Kibana error envelope.
	Body string `yaml:"body"`
	// ContentType of Body; default application/json.
	ContentType string `yaml:"content_type"`
	// Times is how many requests are answered so; 0 means all of them.
	Times int `yaml:"times"`
}

func boolOr(p *bool, def bool) bool {
	if p != nil {
		return *p
	}
	return def
}

func (o *Options) version() Version {
	switch o.Version {
	case "":
		return DefaultVersion
	default:
		return o.Version
	}
}

func (o *Options) atLeast(v Version) bool { return versionNum(o.version()) >= versionNum(v) }

func versionNum(v Version) int {
	if v == VServerless {
		return 9999 // the newest code, whatever the number
	}
	var major, minor int
	fmt.Sscanf(string(v), "%d.%d", &major, &minor)
	return major*100 + minor
}

func (o *Options) roundStatus() bool      { return boolOr(o.RoundStatus, o.atLeast(V94)) }
func (o *Options) paginatedList() bool    { return boolOr(o.PaginatedList, o.atLeast(V96)) }
func (o *Options) cardURLWithSpace() bool { return boolOr(o.CardURLWithSpace, o.atLeast(V93)) }
func (o *Options) agentNotFound404() bool { return boolOr(o.AgentNotFound404, o.atLeast(V93)) }

// privilege is the Kibana privilege name a 403 message cites.
func (o *Options) privilege() string {
	if o.atLeast(V94) {
		return "agentBuilder:read"
	}
	return "read_onechat"
}

// Validate reports options the simulator cannot honour.
func (o *Options) Validate() error {
	if n := versionNum(o.version()); (n < 902 || n > 906) && o.version() != VServerless {
		return fmt.Errorf("unsupported version %q: use 9.2 to 9.6, or serverless", o.Version)
	}
	seen := map[string]bool{}
	for _, a := range o.Agents {
		if a.ID == "" {
			return fmt.Errorf("an agent has no id")
		}
		k := a.Space + "/" + a.ID
		if seen[k] {
			return fmt.Errorf("agent %q appears twice in space %q", a.ID, spaceName(a.Space))
		}
		seen[k] = true
	}
	for _, k := range o.Keys {
		if k.APIKey == "" || k.Username == "" {
			return fmt.Errorf("every key needs api_key and username")
		}
	}
	for _, f := range o.Faults.Statuses {
		switch f.Route {
		case RouteAgents, RouteCard, RouteA2A, RouteConversation, RouteConversations, RouteStatus:
		default:
			return fmt.Errorf("unknown fault route %q", f.Route)
		}
		if f.Status < 100 || f.Status > 599 {
			return fmt.Errorf("fault status %d is not an HTTP status", f.Status)
		}
	}
	return validateSeeds(o)
}

func spaceName(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// LoadOptions reads options from YAML (JSON is YAML too). Durations are
// written as Go durations: "2s", "150ms".
func LoadOptions(r io.Reader) (Options, error) {
	var o Options
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil && err != io.EOF {
		return Options{}, fmt.Errorf("simulator config: %w", configError(err))
	}
	if err := o.Validate(); err != nil {
		return Options{}, fmt.Errorf("simulator config: %w", err)
	}
	return o, nil
}

// unknownField is yaml's "line 3: field bogus_key not found in type
// agentbuildertest.Agent".
var unknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type [\w.]*?(\w+)$`)

// fieldPlaces says where in the file each options type is.
var fieldPlaces = map[string]string{"Options": "at the top level", "Agent": "in an agent", "Key": "in a key",
	"Faults": "in faults", "StatusFault": "in a status fault", "SeedConversation": "in a seeded conversation"}

// configError is a decoding error of the config in the file's terms: an
// unknown key named with its line and where it is ("line 3: unknown key
// bogus_key in an agent"), not as a field of a Go type; yaml's errors of
// one decoding on one line, separated by "; ".
func configError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msgs[i] = e
		if m := unknownField.FindStringSubmatch(e); m != nil {
			place, ok := fieldPlaces[m[3]]
			if !ok {
				place = "in " + m[3]
			}
			msgs[i] = fmt.Sprintf("line %s: unknown key %s %s", m[1], m[2], place)
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// DemoAPIKey is the key DemoOptions accepts (base64 of "demo:courier-demo-secret").
const DemoAPIKey = "ZGVtbzpjb3VyaWVyLWRlbW8tc2VjcmV0"

// DemoOptions returns a simulator with a fast chat agent, a slow audit agent
// that calls tools with large results, and an agent whose runs fail.
func DemoOptions() Options {
	return Options{
		Keys: []Key{{APIKey: DemoAPIKey, Username: "demo"}},
		Agents: []Agent{
			{
				ID: "elastic-ai-agent", Name: "Elastic AI Agent", Readonly: true,
				Description: "Elastic AI Agent: answers questions about your data.",
				Tools:       []string{"platform.core.search", "platform.core.list_indices"},
				Reply:       "Here is what I found about “{{input}}”: 3 indices match and the newest document is from today.",
				RunTime:     300 * time.Millisecond,
			},
			{
				ID: "audit-agent", Name: "Audit Analyst",
				Description: "Analyses audit logs for high-risk operations. Heavy tool use: runs take minutes on a real cluster.",
				Tools:       []string{"platform.core.search", "platform.core.execute_esql", "security.audit.risk_score"},
				Reply: "High-risk operations report for “{{input}}”:\n" +
					"1. 14 privilege escalations, 12 by the same service account.\n" +
					"2. 3 API keys created outside working hours.\n" +
					"3. No deletions of audit indices.\n" +
					"Recommendation: rotate the svc-batch credentials and review its role mapping.",
				RunTime:         3 * time.Second,
				ToolResultBytes: 64 << 10,
			},
			{
				ID: "flaky-agent", Name: "Flaky Agent",
				Description: "An agent whose runs always fail, to show how failures look.",
				Fail:        "No complete response received from chat service",
				RunTime:     200 * time.Millisecond,
			},
		},
	}
}

func applyReply(a *Agent, input string) string {
	tpl := a.Reply
	if tpl == "" {
		tpl = "Echo: {{input}}"
	}
	out := strings.ReplaceAll(tpl, "{{input}}", input)
	if a.ReplyBytes > len(out) {
		var b strings.Builder
		b.Grow(a.ReplyBytes)
		b.WriteString(out)
		line := " The quick brown fox jumps over the lazy dog."
		for b.Len() < a.ReplyBytes {
			b.WriteString(line)
		}
		out = b.String()
	}
	return out
}

func (o *Options) nonBlockingTasks() bool { return boolOr(o.NonBlockingTasks, o.atLeast(V96)) }
func (o *Options) streaming() bool        { return boolOr(o.Streaming, false) }
func (o *Options) abortOnDisconnect() bool {
	return boolOr(o.AbortOnDisconnect, o.atLeast(V96))
}
func (o *Options) conversationAtReceipt() bool {
	return boolOr(o.ConversationAtReceipt, o.atLeast(V96))
}
func (o *Options) interruptedRounds() bool {
	return boolOr(o.InterruptedRounds, o.version() == VServerless)
}
func (o *Options) staleUpdatedAt() bool { return boolOr(o.StaleUpdatedAt, !o.atLeast(V94)) }

// statusInfo is what GET /api/status says: version.number and
// version.build_flavor.
func (o *Options) statusInfo() (number, flavor string) {
	number, flavor = o.StatusNumber, "traditional"
	v := o.version()
	if v == VServerless {
		flavor = "serverless"
	}
	if number == "" {
		number = map[Version]string{V92: "9.2.4", V93: "9.3.3", V94: "9.4.2", V95: "9.5.1", V96: "9.6.0", VServerless: "9.7.0"}[v]
	}
	return number, flavor
}

func (o *Options) streamKeepAlive() time.Duration {
	if o.StreamKeepAlive > 0 {
		return o.StreamKeepAlive
	}
	return 10 * time.Second
}
