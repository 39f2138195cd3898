// Command goserver is a test-only A2A v0.3 server built from the a2a-go SDK
// (github.com/a2aproject/a2a-go v0.3.3). a2a-courier's interop tests start it
// as a child process to check how our client copes with a real third-party
// implementation; it is not part of the product.
//
// Every agent lives under its own base path on one listener:
//
//	POST <origin>/<agent>                              JSON-RPC 2.0 (A2A v0.3)
//	GET  <origin>/<agent>/.well-known/agent-card.json  the agent's card
//
// Agents: echo (Message reply), slow (Task with chunked artifact), fail (Task
// ends failed), ask (Task goes input-required, a follow-up completes it) and
// secure (echo behind a bearer token).
//
// The first line on stdout is the bound origin, e.g. http://127.0.0.1:40123;
// logs go to stderr. The protocol itself is the SDK's (a2asrv); this file only
// supplies agent behaviour, cards and the bearer check in front of secure.
package main

import (
	"context"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// tokenEnv names the environment variable the secure agent's token is read
// from when --token is not given. Tests use the variable so that the token
// never appears in a process listing.
const tokenEnv = "A2A_INTEROP_TOKEN"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	addr       string
	token      string
	slowChunks int
	slowDelay  time.Duration
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("goserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address (port 0 picks a free port)")
	fs.StringVar(&o.token, "token", "", "bearer token the secure agent requires (default: $"+tokenEnv+")")
	fs.IntVar(&o.slowChunks, "slow-chunks", 3, "artifact chunks the slow agent emits unless the message says chunks=N")
	fs.DurationVar(&o.slowDelay, "slow-delay", 200*time.Millisecond, "pause before each slow chunk unless the message says delay=D")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.token == "" {
		o.token = os.Getenv(tokenEnv)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(logger)

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		fmt.Fprintf(stderr, "goserver: listen %s: %v\n", o.addr, err)
		return 1
	}
	origin := "http://" + advertisedHost(ln.Addr().(*net.TCPAddr))
	mux := newMux(origin, o, logger)

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	// The origin line is the readiness signal: the listener is already
	// accepting connections when it is printed.
	fmt.Fprintln(stdout, origin)
	if o.token == "" {
		logger.Warn("no bearer token configured: the secure agent rejects every request", "hint", "set --token or $"+tokenEnv)
	}

	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "goserver: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return 0
}

// advertisedHost turns the bound address into one a client can dial: an
// unspecified address (0.0.0.0, ::) becomes loopback.
func advertisedHost(a *net.TCPAddr) string {
	ip := a.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(a.Port))
}

func newMux(origin string, o options, logger *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mount := func(name, description string, exec a2asrv.AgentExecutor, wrap func(http.Handler) http.Handler) {
		card := agentCard(origin, name, description)
		if name == "secure" {
			card.SecuritySchemes = a2a.NamedSecuritySchemes{
				"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "static test token"},
			}
			card.Security = []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}}
		}
		var rpc http.Handler = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec, a2asrv.WithLogger(logger.With("agent", name))))
		if wrap != nil {
			rpc = wrap(rpc)
		}
		mux.Handle("/"+name, rpc)
		mux.Handle("/"+name+a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	}
	mount("echo", "Replies with a Message that echoes the text it was sent.", echoAgent{}, nil)
	mount("slow", "Works for a while and streams a text artifact in chunks (append/lastChunk). "+
		"Say chunks=N and delay=250ms in the message to tune it.", slowAgent{chunks: o.slowChunks, delay: o.slowDelay}, nil)
	mount("fail", "Starts a task and always ends it failed, with the reason in the status message.", failAgent{}, nil)
	mount("ask", "Asks a question (input-required); a follow-up message on the same task completes it.", askAgent{}, nil)
	mount("secure", "Echo agent that requires a bearer token.", echoAgent{}, func(h http.Handler) http.Handler {
		return requireBearer(o.token, h)
	})
	return mux
}

func agentCard(origin, name, description string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:               name,
		Description:        description,
		URL:                origin + "/" + name,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            "0.0.1",
		Provider:           &a2a.AgentProvider{Org: "a2a-courier interop (a2a-go v0.3.3)", URL: "https://github.com/a2aproject/a2a-go"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID:          name,
			Name:        name,
			Description: description,
			Tags:        []string{"test"},
		}},
	}
}

// requireBearer answers 401 with a WWW-Authenticate challenge unless the
// request carries "Authorization: Bearer <token>". An empty token rejects
// everything rather than letting everything through.
func requireBearer(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" ||
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a-courier-interop"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"missing or invalid bearer token"}`+"\n")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// messageText joins the text parts of a message.
func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var texts []string
	for _, p := range m.Parts {
		if t, ok := p.(a2a.TextPart); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func agentText(info a2a.TaskInfoProvider, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.TextPart{Text: text})
}

// echoAgent answers with a Message and never creates a task.
type echoAgent struct{}

func (echoAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	reply := a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: "echo: " + messageText(reqCtx.Message)})
	reply.ContextID = reqCtx.ContextID
	return q.Write(ctx, reply)
}

func (echoAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	return a2a.ErrTaskNotCancelable
}

// slowAgent works through a number of timed steps, emitting one artifact
// chunk per step: the first chunk creates the artifact, later ones append,
// and the last one carries lastChunk.
type slowAgent struct {
	chunks int
	delay  time.Duration
}

var (
	chunksRE = regexp.MustCompile(`\bchunks=(\d+)\b`)
	delayRE  = regexp.MustCompile(`\bdelay=([0-9.]+(?:ns|us|µs|ms|s|m))`)
)

// params reads optional "chunks=N" and "delay=D" directives from the text.
func (a slowAgent) params(text string) (int, time.Duration) {
	chunks, delay := a.chunks, a.delay
	if m := chunksRE.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n <= 1000 {
			chunks = n
		}
	}
	if m := delayRE.FindStringSubmatch(text); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil && d >= 0 && d <= time.Minute {
			delay = d
		}
	}
	return max(chunks, 1), delay
}

func (a slowAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	chunks, delay := a.params(messageText(reqCtx.Message))
	if reqCtx.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateSubmitted, nil)); err != nil {
			return err
		}
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateWorking, agentText(reqCtx, "working"))); err != nil {
		return err
	}
	var artifactID a2a.ArtifactID
	for i := 1; i <= chunks; i++ {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			// Canceled: the SDK already applied the canceled status that
			// Cancel wrote; nothing more to say.
			t.Stop()
			return nil
		case <-t.C:
		}
		part := a2a.TextPart{Text: fmt.Sprintf("chunk %d/%d\n", i, chunks)}
		var ev *a2a.TaskArtifactUpdateEvent
		if artifactID == "" {
			ev = a2a.NewArtifactEvent(reqCtx, part)
			ev.Artifact.Name = "slow-output"
			artifactID = ev.Artifact.ID
		} else {
			ev = a2a.NewArtifactUpdateEvent(reqCtx, artifactID, part)
		}
		ev.LastChunk = i == chunks
		if err := q.Write(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	done := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCompleted, agentText(reqCtx, fmt.Sprintf("done after %d chunks", chunks)))
	done.Final = true
	return q.Write(ctx, done)
}

func (slowAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCanceled, agentText(reqCtx, "canceled on request"))
	ev.Final = true
	return q.Write(ctx, ev)
}

// failAgent starts a task and ends it failed with a reason.
type failAgent struct{}

// failReason is the status message text of every task the fail agent ends.
const failReason = "fail agent: this task always fails"

func (failAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	if reqCtx.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateSubmitted, nil)); err != nil {
			return err
		}
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateFailed, agentText(reqCtx, failReason))
	ev.Final = true
	return q.Write(ctx, ev)
}

func (failAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// askAgent asks for a name (input-required); the follow-up message on the
// same task completes it with a greeting artifact.
type askAgent struct{}

const askQuestion = "What is your name?"

func (askAgent) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	if reqCtx.StoredTask == nil {
		if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateSubmitted, nil)); err != nil {
			return err
		}
		ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateInputRequired, agentText(reqCtx, askQuestion))
		// In a2a-go an interrupted state ends the execution only when the
		// status update is marked final.
		ev.Final = true
		return q.Write(ctx, ev)
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	answer := strings.TrimSpace(messageText(reqCtx.Message))
	art := a2a.NewArtifactEvent(reqCtx, a2a.TextPart{Text: "Hello, " + answer + "!"})
	art.Artifact.Name = "greeting"
	art.LastChunk = true
	if err := q.Write(ctx, art); err != nil {
		return err
	}
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCompleted, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

func (askAgent) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCanceled, agentText(reqCtx, "canceled on request"))
	ev.Final = true
	return q.Write(ctx, ev)
}
