package serve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/runner"
)

// Server is a running serve.
type Server struct {
	opts    Options
	argv    []string
	callers []caller
	tasks   *table
	audit   *audit
	limit   *limiter
	run     *runner.Runner
	slots   chan struct{}
	base    string
	// runs is canceled when the server stops; a run it ends is recorded
	// failed (StoppedReason), not canceled.
	runs    context.Context
	stopAll context.CancelFunc
	now     func() time.Time
	unlock  func()
	running sync.WaitGroup
	// localTokens is the tokens file serve made itself (no --tokens-file):
	// a token is always wanted.
	localTokens string
}

// New checks the options and loads the tokens. Open then opens the state.
func New(opts Options) (*Server, error) {
	opts.setDefaults()
	argv, err := opts.argv()
	if err != nil {
		return nil, err
	}
	if opts.StateDir == "" {
		return nil, errNoState
	}
	s := &Server{opts: opts, argv: argv, limit: newLimiter(opts.RatePerMinute, opts.Burst),
		slots: make(chan struct{}, opts.Concurrency), now: time.Now}
	if opts.TokensFile != "" {
		if s.callers, err = LoadTokens(opts.TokensFile); err != nil {
			return nil, err
		}
	} else {
		s.localTokens = filepath.Join(opts.StateDir, LocalTokensName)
	}
	if opts.TLSKey != "" {
		if err := privateFile("the TLS key", opts.TLSKey); err != nil {
			return nil, err
		}
	}
	s.run = &runner.Runner{Limits: opts.Limits, LookupEnv: opts.LookupEnv}
	s.runs, s.stopAll = context.WithCancel(context.Background())
	s.base = s.publicURL(opts.Listen)
	return s, nil
}

func (s *Server) publicURL(addr string) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if s.opts.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + addr
}

// Card is the agent card the server publishes (v1 true: A2A 1.0 only,
// as a client asking with A2A-Version: 1.0 gets it).
func (s *Server) Card(v1 bool) []byte { return card(s.opts, s.base, true, v1) }

// Run serves until ctx ends, then stops: running tasks are recorded failed
// (StoppedReason), as a restart would find them.
func Run(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Open locks the state directory (one server at a time), loads the kept
// tasks, marking failed (StoppedReason) those that were running when the
// server last stopped, and opens the audit log.
func (s *Server) Open() error {
	if err := ownfile.MkdirAll(s.opts.StateDir); err != nil {
		return fmt.Errorf("cannot make the state directory: %w", err)
	}
	unlock, err := lockDir(filepath.Join(s.opts.StateDir, "serve.lock"))
	if err != nil {
		return err
	}
	if s.localTokens != "" {
		if s.callers, err = localCallers(s.localTokens); err != nil {
			unlock()
			return err
		}
	}
	tasks, stopped, err := openTable(filepath.Join(s.opts.StateDir, "tasks"), s.now(), s.opts.Keep)
	if err != nil {
		unlock()
		return fmt.Errorf("cannot open the task records: %w", err)
	}
	s.tasks = tasks
	if s.audit, err = openAudit(filepath.Join(s.opts.StateDir, "audit.jsonl")); err != nil {
		unlock()
		return fmt.Errorf("cannot open the audit log: %w", err)
	}
	s.unlock = unlock
	if stopped > 0 {
		fmt.Fprintf(s.opts.Log, "serve: %d task(s) were running when the server last stopped: recorded failed, not run again\n", stopped)
	}
	return nil
}

// Close releases what Open took.
func (s *Server) Close() {
	s.audit.close()
	s.unlock()
}

// Serve opens the state, listens and serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Open(); err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", s.opts.Listen, err)
	}
	if s.opts.PublicURL == "" {
		s.base = s.publicURL(ln.Addr().String())
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if host, _, _ := net.SplitHostPort(s.opts.Listen); s.opts.PublicURL == "" && (host == "" || net.ParseIP(host).IsUnspecified()) {
		fmt.Fprintf(s.opts.Log, "serve: the card names %s, which other machines cannot reach: give --public-url (e.g. https://b.example:8790)\n", ln.Addr())
	}
	if s.opts.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.opts.TLSCert, s.opts.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("cannot load the TLS certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	fmt.Fprintf(s.opts.Log, "serve: listening on %s (card %s/.well-known/agent-card.json; %d task(s) kept; concurrency %d)\n",
		ln.Addr(), s.base, s.tasks.count(), s.opts.Concurrency)
	if s.localTokens != "" {
		fmt.Fprintf(s.opts.Log, "serve: no --tokens-file: callers need the token in %s (a2a-courier send --url %s --token-file %s \"…\")\n",
			s.localTokens, s.base, s.localTokens)
	}
	if s.opts.Ready != nil {
		s.opts.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	s.stop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// stop ends every run and waits until each is recorded.
func (s *Server) stop() {
	s.stopAll()
	s.running.Wait()
}

// Handler is the server's HTTP handler: the card (public), then, behind
// the token and the rate limit, JSON-RPC at the base path and HTTP+JSON
// below it.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", s.serveCard)
	mux.HandleFunc("GET /.well-known/agent.json", s.serveCard)
	mux.Handle("/", s.guard(http.HandlerFunc(s.route)))
	return mux
}

func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	v1 := r.Header.Get("A2A-Version") == "1.0" || r.URL.Query().Get("A2A-Version") == "1.0"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Vary", "A2A-Version")
	w.Write(s.Card(v1))
}

type callerKey struct{}

func callerOf(r *http.Request) string { n, _ := r.Context().Value(callerKey{}).(string); return n }

// guard lets through a request with a known token (the generated one of
// the caller "local", without a tokens file) within its caller's rate, and
// bounds its body.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := who(s.callers, r)
		if !ok {
			s.audit.refused(s.now())
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a-courier serve"`)
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "missing or invalid bearer token"})
			return
		}
		if ok, secs := s.limit.allow(name, s.now()); !ok {
			s.audit.write(auditEntry{Caller: name, Op: "request", Outcome: "rate-limited", Status: 429})
			retryAfter(w, secs)
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": fmt.Sprintf("too many requests: try again in %d s", secs)})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, name)))
	})
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (p == "/" || p == ""):
		s.serveJSONRPC(w, r)
	case strings.HasPrefix(p, "/message:") || strings.HasPrefix(p, "/tasks"):
		s.serveREST(w, r)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such route: POST JSON-RPC to / or use the HTTP+JSON paths"})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
