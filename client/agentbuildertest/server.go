package agentbuildertest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// Sim is the simulator's state and HTTP handler. Server wraps it in a
// listening HTTP server.
type Sim struct {
	opts Options
	now  func() time.Time
	logf func(string, ...any)

	runCtx    context.Context
	cancelRun context.CancelFunc
	runWG     sync.WaitGroup

	mu            sync.Mutex
	faults        Faults
	statusLeft    []int // per Faults.Statuses entry: remaining uses, -1 = unlimited
	failRunsLeft  int
	conversations map[string]*conversation // key: space + "\x00" + id
	runs          map[string]int           // contextId → runs started
	completedAt   map[string]time.Time     // contextId → last round stored
	endedAt       map[string]time.Time     // contextId → last run ended, however
	active        int
	totalRuns     int
	requests      map[string]int  // route → requests that reached it
	tasks         map[string]*run // taskId → run, non-blocking runs only (tasks.go)

	counts counter // requests by kind (counts.go)
}

type conversation struct {
	ID        string            `json:"id"`
	AgentID   string            `json:"agent_id"`
	Username  string            `json:"username"`
	Space     string            `json:"space"`
	Title     string            `json:"title"`
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
	Rounds    []json.RawMessage `json:"rounds"`

	version int
	cache   *renderCache
}

type renderCache struct {
	version int
	plain   []byte
	gz      []byte
}

// New returns a simulator for opts. It panics on invalid options, as
// httptest does on a listen failure: options are fixed by the test author.
func New(opts Options) *Sim {
	if err := opts.Validate(); err != nil {
		panic("agentbuildertest: " + err.Error())
	}
	s := &Sim{
		opts:          opts,
		now:           opts.Now,
		logf:          opts.Logf,
		conversations: map[string]*conversation{},
		runs:          map[string]int{},
		completedAt:   map[string]time.Time{},
		endedAt:       map[string]time.Time{},
		tasks:         map[string]*run{},
		requests:      map[string]int{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if s.opts.MaxBodyBytes <= 0 {
		s.opts.MaxBodyBytes = 1 << 20
	}
	s.runCtx, s.cancelRun = context.WithCancel(context.Background())
	s.setFaultsLocked(opts.Faults)
	s.seedLocked(opts.Seed)
	if opts.DataFile != "" {
		if err := s.load(); err != nil {
			panic("agentbuildertest: " + err.Error())
		}
	}
	return s
}

// SetFaults replaces the injected faults; it applies to requests that
// arrive from now on.
func (s *Sim) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setFaultsLocked(f)
}

func (s *Sim) setFaultsLocked(f Faults) {
	s.faults = f
	s.statusLeft = make([]int, len(f.Statuses))
	for i, sf := range f.Statuses {
		s.statusLeft[i] = sf.Times
		if sf.Times == 0 {
			s.statusLeft[i] = -1
		}
	}
	s.failRunsLeft = f.FailRuns
}

// Faults returns the faults in force.
func (s *Sim) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Runs returns how many runs were started for a contextId: a test proves
// that nothing was sent twice by finding 1 here.
func (s *Sim) Runs(contextID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[contextID]
}

// Requests returns how many requests reached a route (RouteStatus,
// RouteCard, …), whatever they were answered: a test proves that a cached
// answer spared a request.
func (s *Sim) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

func (s *Sim) countRequest(route string) {
	s.mu.Lock()
	s.requests[route]++
	s.mu.Unlock()
}

// TotalRuns returns the number of runs started since the simulator began.
func (s *Sim) TotalRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totalRuns
}

// ActiveRuns returns the number of runs still going.
func (s *Sim) ActiveRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// CompletedAt returns when the last round of a contextId was stored.
func (s *Sim) CompletedAt(contextID string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.completedAt[contextID]
	return t, ok
}

// EndedAt returns when the last run of a contextId ended, completed,
// failed or aborted.
func (s *Sim) EndedAt(contextID string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.endedAt[contextID]
	return t, ok
}

// WaitIdle blocks until no run is active or ctx ends.
func (s *Sim) WaitIdle(ctx context.Context) error {
	for {
		if s.ActiveRuns() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ConversationJSON returns the stored document of a conversation as the GET
// route would, for tests; ok is false when it does not exist.
func (s *Sim) ConversationJSON(space, id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conversations[space+"\x00"+id]
	if c == nil {
		return nil, false
	}
	return s.renderLocked(c).plain, true
}

// PutConversation stores a conversation directly, for tests that need
// history without running agents. Rounds are stored as given.
func (s *Sim) PutConversation(space, id, agentID, username, title string, updated time.Time, rounds ...json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := updated.UTC().Format(time.RFC3339Nano)
	s.conversations[space+"\x00"+id] = &conversation{
		ID: id, AgentID: agentID, Username: username, Space: space, Title: title,
		CreatedAt: ts, UpdatedAt: ts, Rounds: rounds,
	}
	s.saveLocked()
}

// Close stops the runs in progress. Their rounds are not stored.
func (s *Sim) Close() {
	s.cancelRun()
	s.runWG.Wait()
}

// delayed waits Faults.ResponseDelay; false when the client went first.
func (s *Sim) delayed(r *http.Request) bool {
	if d := s.Faults().ResponseDelay; d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return false
		}
	}
	return true
}

// ServeHTTP implements http.Handler.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/__sim/") {
		s.serveAdmin(w, r)
		return
	}
	space, rest, ok := splitSpace(r.URL.EscapedPath())
	if !ok {
		s.boom(w, r, http.StatusNotFound, "Not Found")
		return
	}
	if rest == "/api/status" && r.Method == http.MethodGet {
		if s.delayed(r) {
			s.status(w, r)
		}
		return
	}
	const api = "/api/agent_builder/"
	if !strings.HasPrefix(rest, api) {
		s.boom(w, r, http.StatusNotFound, "Not Found")
		return
	}
	rest = strings.TrimPrefix(rest, api)
	route, id := "", ""
	switch {
	case rest == "agents" && r.Method == http.MethodGet:
		route = RouteAgents
	case strings.HasPrefix(rest, "a2a/") && strings.HasSuffix(rest, ".json") && r.Method == http.MethodGet:
		route, id = RouteCard, strings.TrimSuffix(strings.TrimPrefix(rest, "a2a/"), ".json")
	case strings.HasPrefix(rest, "a2a/") && r.Method == http.MethodPost:
		route, id = RouteA2A, strings.TrimPrefix(rest, "a2a/")
	case rest == "conversations" && r.Method == http.MethodGet:
		route = RouteConversations
	case strings.HasPrefix(rest, "conversations/") && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		route, id = RouteConversation, strings.TrimPrefix(rest, "conversations/")
	default:
		s.boom(w, r, http.StatusNotFound, "Not Found")
		return
	}
	if strings.Contains(id, "/") || id == "" && route != RouteAgents && route != RouteConversations {
		s.boom(w, r, http.StatusNotFound, "Not Found")
		return
	}
	if unesc, err := pathUnescape(id); err == nil {
		id = unesc
	}
	s.countRequest(route)
	if route == RouteA2A {
		defer s.counts.begin(s.peekA2AKind(r))()
	} else {
		defer s.counts.begin(routeKind(route, r.Method))()
	}
	// The delay counts as open: the request is in, not yet answered.
	if !s.delayed(r) {
		return
	}
	if s.injectStatus(w, r, route) {
		return
	}
	key := s.authenticate(r)
	if key == nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="kibana", ApiKey`)
		s.boom(w, r, http.StatusUnauthorized, "Unauthorized")
		return
	}
	// Kibana authenticates before it routes by version.
	if v := r.Header.Get("elastic-api-version"); v != "" && v != "2023-10-31" {
		s.boom(w, r, http.StatusBadRequest, fmt.Sprintf(`No version "%s" available for [%s] [%s]. Available versions are: [2023-10-31]`, v, r.Method, r.URL.Path))
		return
	}
	if !key.allows(space) {
		s.boom(w, r, http.StatusForbidden, fmt.Sprintf("API [%s %s] is unauthorized for user, this action is granted by the Kibana privileges [%s]",
			r.Method, r.URL.Path, s.opts.privilege()))
		return
	}
	if s.opts.AgentBuilderDisabled {
		s.boom(w, r, http.StatusNotFound, "Not Found")
		return
	}
	switch route {
	case RouteAgents:
		s.listAgents(w, r, space)
	case RouteCard:
		s.card(w, r, space, id)
	case RouteA2A:
		s.a2a(w, r, space, id, key)
	case RouteConversations:
		s.listConversations(w, r, space, key)
	case RouteConversation:
		if r.Method == http.MethodDelete {
			s.deleteConversation(w, r, space, id, key)
		} else {
			s.getConversation(w, r, space, id, key)
		}
	}
}

// status answers GET /api/status as Kibana core does for an authenticated
// caller: the name, the version (number and build flavor) and the overall
// level, with plugin statuses and metrics left short. Kibana answers it to
// any authenticated user; it asks for no Agent Builder privilege.
func (s *Sim) status(w http.ResponseWriter, r *http.Request) {
	s.countRequest(RouteStatus)
	defer s.counts.begin(KindStatus)()
	if s.injectStatus(w, r, RouteStatus) {
		return
	}
	if s.authenticate(r) == nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="kibana", ApiKey`)
		s.boom(w, r, http.StatusUnauthorized, "Unauthorized")
		return
	}
	number, flavor := s.opts.statusInfo()
	s.logf("GET %s -> 200 (%s, %s)", r.URL.Path, number, flavor)
	writeJSON(w, r, http.StatusOK, map[string]any{
		"name": "agent-builder-simulator",
		"uuid": "5b2de169-2785-441b-ae8c-186a1936b17d",
		"version": map[string]any{
			"number": number, "build_hash": "0000000000000000000000000000000000000000", "build_number": 99999,
			"build_snapshot": false, "build_flavor": flavor, "build_date": "2026-11-01T00:00:00.000Z",
		},
		"status": map[string]any{
			"overall": map[string]any{"level": "available", "summary": "All services and plugins are available"},
			"core": map[string]any{
				"elasticsearch":    map[string]any{"level": "available", "summary": "Elasticsearch is available"},
				"savedObjects":     map[string]any{"level": "available", "summary": "SavedObjects service has completed migrations and is available"},
				"http":             map[string]any{"level": "available", "summary": "All services and plugins are available"},
				"featureFlags":     map[string]any{"level": "available", "summary": "All services and plugins are available"},
				"pricing":          map[string]any{"level": "available", "summary": "All services and plugins are available"},
				"uiSettings":       map[string]any{"level": "available", "summary": "All services and plugins are available"},
				"executionContext": map[string]any{"level": "available", "summary": "All services and plugins are available"},
			},
			"plugins": map[string]any{
				"agentBuilder": map[string]any{"level": "available", "summary": "All dependencies are available"},
				"taskManager":  map[string]any{"level": "available", "summary": "Task Manager is healthy"},
			},
		},
		"metrics": map[string]any{"last_updated": isoMillis(s.now()), "collection_interval_in_millis": 5000},
	}, !s.opts.DisableGzip)
}

// splitSpace removes an optional /s/<space> prefix.
func splitSpace(p string) (space, rest string, ok bool) {
	if !strings.HasPrefix(p, "/s/") {
		return "", p, true
	}
	tail := p[len("/s/"):]
	i := strings.IndexByte(tail, '/')
	if i <= 0 {
		return "", "", false
	}
	space = tail[:i]
	if space == "default" {
		space = ""
	}
	return space, tail[i:], true
}

func pathUnescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	return url.PathUnescape(s)
}

func (k *Key) allows(space string) bool {
	if len(k.Spaces) == 0 {
		return true
	}
	for _, sp := range k.Spaces {
		if sp == spaceName(space) {
			return true
		}
	}
	return false
}

func (s *Sim) authenticate(r *http.Request) *Key {
	h := r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "ApiKey") {
		return nil
	}
	cred = strings.TrimSpace(cred)
	for i := range s.opts.Keys {
		if s.opts.Keys[i].APIKey == cred {
			return &s.opts.Keys[i]
		}
	}
	return nil
}

func (s *Sim) injectStatus(w http.ResponseWriter, r *http.Request, route string) bool {
	s.mu.Lock()
	var hit *StatusFault
	for i := range s.faults.Statuses {
		f := &s.faults.Statuses[i]
		if f.Route != route || s.statusLeft[i] == 0 {
			continue
		}
		if s.statusLeft[i] > 0 {
			s.statusLeft[i]--
		}
		hit = f
		break
	}
	s.mu.Unlock()
	if hit == nil {
		return false
	}
	if hit.RetryAfter != "" {
		w.Header().Set("Retry-After", hit.RetryAfter)
	}
	if hit.Body == "" {
		s.boom(w, r, hit.Status, http.StatusText(hit.Status))
		return true
	}
	ct := hit.ContentType
	if ct == "" {
		ct = "application/json; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(hit.Status)
	io.WriteString(w, hit.Body)
	s.logf("%s %s -> %d (injected)", r.Method, r.URL.Path, hit.Status)
	return true
}

// boom writes Kibana's error envelope.
func (s *Sim) boom(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.logf("%s %s -> %d %s", r.Method, r.URL.Path, status, msg)
	writeJSON(w, r, status, map[string]any{"statusCode": status, "error": http.StatusText(status), "message": msg}, false)
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any, gz bool) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(w, r, status, b, nil, gz)
}

// writeBody sends b, or its gzip form when the client accepts it and the
// body is over 1 KiB (hapi's threshold). gzipped may be precomputed.
func writeBody(w http.ResponseWriter, r *http.Request, status int, b, gzipped []byte, gz bool) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	if gz && len(b) > 1024 && acceptsGzip(r) {
		if gzipped == nil {
			gzipped = gzipBytes(b)
		}
		h.Set("Content-Encoding", "gzip")
		h.Set("Vary", "accept-encoding")
		h.Set("Content-Length", strconv.Itoa(len(gzipped)))
		w.WriteHeader(status)
		w.Write(gzipped)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(enc, "gzip") {
			return true
		}
	}
	return false
}

// gzipWriters keeps compressors for reuse: each holds about a megabyte of
// tables, and allocating one per response made the simulator collect
// garbage on the CPUs that the client under test (scripts/bench) shares.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b) / 4)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&buf)
	zw.Write(b)
	zw.Close()
	zw.Reset(io.Discard)
	gzipWriters.Put(zw)
	return buf.Bytes()
}

func (s *Sim) findAgent(space, id string) *Agent {
	for i := range s.opts.Agents {
		a := &s.opts.Agents[i]
		if a.ID == id && a.Space == space {
			return a
		}
	}
	return nil
}

func (s *Sim) listAgents(w http.ResponseWriter, r *http.Request, space string) {
	results := []map[string]any{}
	for _, a := range s.opts.Agents {
		if a.Space != space {
			continue
		}
		tools := a.Tools
		if tools == nil {
			tools = []string{}
		}
		def := map[string]any{
			"id": a.ID, "type": "chat", "name": a.Name, "description": a.Description, "readonly": a.Readonly,
			"configuration": map[string]any{"tools": []map[string]any{{"tool_ids": tools}}},
		}
		if a.Instructions != "" {
			def["configuration"].(map[string]any)["instructions"] = a.Instructions
		}
		results = append(results, def)
	}
	s.logf("GET %s -> 200 (%d agents)", r.URL.Path, len(results))
	writeJSON(w, r, http.StatusOK, map[string]any{"results": results}, !s.opts.DisableGzip)
}

func (s *Sim) agentNotFound(w http.ResponseWriter, r *http.Request, prefix, id string) {
	if s.opts.agentNotFound404() {
		s.boom(w, r, http.StatusNotFound, fmt.Sprintf("%s: [agentNotFound] Agent %s not found", prefix, id))
		return
	}
	s.boom(w, r, http.StatusInternalServerError, fmt.Sprintf("%s: Agent %s not found", prefix, id))
}

func (s *Sim) publicBase(r *http.Request) string {
	if s.opts.PublicBaseURL != "" {
		return strings.TrimRight(s.opts.PublicBaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Sim) card(w http.ResponseWriter, r *http.Request, space, id string) {
	a := s.findAgent(space, id)
	if a == nil {
		s.agentNotFound(w, r, "Failed to serve agent card", id)
		return
	}
	u := s.publicBase(r)
	if space != "" && s.opts.cardURLWithSpace() {
		u += "/s/" + space
	}
	u += "/api/agent_builder/a2a/" + a.ID
	skills := []map[string]any{}
	for _, t := range a.Tools {
		skills = append(skills, map[string]any{
			"id": t, "name": t, "description": "Tool " + t, "tags": []string{"tool"}, "examples": []string{},
			"inputModes": []string{"text/plain", "application/json"}, "outputModes": []string{"text/plain", "application/json"},
		})
	}
	card := map[string]any{
		"name": a.Name, "description": a.Description, "url": u,
		"provider":        map[string]any{"organization": "Elastic", "url": "https://elastic.co"},
		"version":         "0.1.0",
		"protocolVersion": "0.3.0",
		"capabilities":    map[string]any{"streaming": s.opts.streaming(), "pushNotifications": false, "stateTransitionHistory": false},
		"securitySchemes": map[string]any{"authorization": map[string]any{
			"type": "apiKey", "name": "Authorization", "in": "header", "description": "Authentication token"}},
		"defaultInputModes":                 []string{"text/plain"},
		"defaultOutputModes":                []string{"text/plain"},
		"skills":                            skills,
		"supportsAuthenticatedExtendedCard": false,
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	s.logf("GET %s -> 200", r.URL.Path)
	writeJSON(w, r, http.StatusOK, card, !s.opts.DisableGzip)
}

func (s *Sim) conversationKey(space, id string) string { return space + "\x00" + id }

// visibleLocked returns the conversation if it exists in space and belongs
// to the key's owner (9.2–9.5 conversations are private).
func (s *Sim) visibleLocked(space, id string, key *Key) *conversation {
	c := s.conversations[s.conversationKey(space, id)]
	if c == nil || c.Username != key.Username {
		return nil
	}
	return c
}

func (s *Sim) getConversation(w http.ResponseWriter, r *http.Request, space, id string, key *Key) {
	s.counts.looked(strings.TrimPrefix(id, "a2a-"), false)
	s.mu.Lock()
	c := s.visibleLocked(space, id, key)
	var rc *renderCache
	if c != nil {
		rc = s.renderLocked(c)
		if !s.opts.DisableGzip && len(rc.plain) > 1024 && acceptsGzip(r) && rc.gz == nil {
			rc.gz = gzipBytes(rc.plain)
		}
	}
	s.mu.Unlock()
	if c == nil {
		s.boom(w, r, http.StatusNotFound, fmt.Sprintf("Conversation %s not found", id))
		return
	}
	s.logf("GET %s -> 200 (%d bytes)", r.URL.Path, len(rc.plain))
	writeBody(w, r, http.StatusOK, rc.plain, rc.gz, !s.opts.DisableGzip)
}

// renderLocked returns the conversation's JSON, cached per version so that
// repeated polls of a large document cost no rendering.
func (s *Sim) renderLocked(c *conversation) *renderCache {
	if c.cache != nil && c.cache.version == c.version {
		return c.cache
	}
	var b bytes.Buffer
	head := map[string]any{
		"id": c.ID, "agent_id": c.AgentID, "user": map[string]string{"username": c.Username},
		"title": c.Title, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt,
	}
	hb, _ := json.Marshal(head)
	b.Grow(len(hb) + 16 + sumLen(c.Rounds))
	b.Write(hb[:len(hb)-1])
	b.WriteString(`,"rounds":[`)
	for i, rd := range c.Rounds {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rd)
	}
	b.WriteString("]}")
	c.cache = &renderCache{version: c.version, plain: b.Bytes()}
	return c.cache
}

func sumLen(rs []json.RawMessage) int {
	n := 0
	for _, r := range rs {
		n += len(r) + 1
	}
	return n
}

func (s *Sim) deleteConversation(w http.ResponseWriter, r *http.Request, space, id string, key *Key) {
	if r.Header.Get("kbn-xsrf") == "" {
		s.boom(w, r, http.StatusBadRequest, "Request must contain a kbn-xsrf header.")
		return
	}
	s.mu.Lock()
	c := s.visibleLocked(space, id, key)
	if c != nil {
		delete(s.conversations, s.conversationKey(space, id))
		s.saveLocked()
	}
	s.mu.Unlock()
	if c == nil {
		s.boom(w, r, http.StatusNotFound, fmt.Sprintf("Conversation %s not found", id))
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"success": true}, false)
}

func (s *Sim) listConversations(w http.ResponseWriter, r *http.Request, space string, key *Key) {
	s.counts.listed()
	q := r.URL.Query()
	agentID := q.Get("agent_id")
	type item struct {
		c       *conversation
		updated string
	}
	s.mu.Lock()
	var items []item
	for _, c := range s.conversations {
		if c.Space != space || c.Username != key.Username || (agentID != "" && c.AgentID != agentID) {
			continue
		}
		// A copy of the list's fields: a run writes them under s.mu.
		cp := &conversation{ID: c.ID, AgentID: c.AgentID, Username: c.Username, Title: c.Title, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
		items = append(items, item{cp, c.UpdatedAt})
	}
	s.mu.Unlock()
	summary := func(c *conversation) map[string]any {
		m := map[string]any{
			"id": c.ID, "agent_id": c.AgentID, "user": map[string]string{"username": c.Username},
			"title": c.Title, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt,
		}
		if s.opts.paginatedList() {
			m["attachments"] = []any{}
			m["pinned"] = false
			m["permissions"] = map[string]bool{"rename": true, "delete": true}
		}
		return m
	}
	if !s.opts.paginatedList() {
		// 9.2–9.5 validate the query strictly: only agent_id is known.
		for k := range q {
			if k != "agent_id" {
				s.boom(w, r, http.StatusBadRequest, fmt.Sprintf("[request query.%s]: definition for this key is missing", k))
				return
			}
		}
		// 9.2–9.5: no server-side sort (map order is random) and at most
		// 1000 results.
		rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		if len(items) > 1000 {
			items = items[:1000]
		}
		results := make([]map[string]any, 0, len(items))
		for _, it := range items {
			results = append(results, summary(it.c))
		}
		s.logf("GET %s -> 200 (%d conversations)", r.URL.Path, len(results))
		writeJSON(w, r, http.StatusOK, map[string]any{"results": results}, !s.opts.DisableGzip)
		return
	}
	page, perPage := 1, 1000
	var err error
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 {
			s.boom(w, r, http.StatusBadRequest, "[request query.page]: Value must be equal to or greater than [1].")
			return
		}
	}
	if v := q.Get("per_page"); v != "" {
		if perPage, err = strconv.Atoi(v); err != nil || perPage < 1 || perPage > 1000 {
			s.boom(w, r, http.StatusBadRequest, "[request query.per_page]: Value must be between [1] and [1000].")
			return
		}
	}
	if page*perPage > 10000 {
		s.boom(w, r, http.StatusBadRequest, "page * per_page must not exceed 10000")
		return
	}
	order := q.Get("sort_order")
	if order == "" {
		order = "desc"
	}
	if order != "asc" && order != "desc" {
		s.boom(w, r, http.StatusBadRequest, `[request query.sort_order]: types that failed validation: expected "asc" or "desc"`)
		return
	}
	sort.Slice(items, func(i, j int) bool {
		if order == "asc" {
			return items[i].updated < items[j].updated
		}
		return items[i].updated > items[j].updated
	})
	total := len(items)
	start := (page - 1) * perPage
	if start > total {
		start = total
	}
	end := min(start+perPage, total)
	results := make([]map[string]any, 0, end-start)
	for _, it := range items[start:end] {
		results = append(results, summary(it.c))
	}
	s.logf("GET %s -> 200 (page %d, %d of %d conversations)", r.URL.Path, page, len(results), total)
	writeJSON(w, r, http.StatusOK, map[string]any{
		"pagination": map[string]int{"total": total, "page": page, "per_page": perPage},
		"results":    results,
	}, !s.opts.DisableGzip)
}

// --- persistence across restarts ---

type dataFile struct {
	Conversations []*conversation `json:"conversations"`
	Runs          map[string]int  `json:"runs"`
}

func (s *Sim) load() error {
	b, err := os.ReadFile(s.opts.DataFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var d dataFile
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("data file %s: %w", s.opts.DataFile, err)
	}
	for _, c := range d.Conversations {
		s.conversations[s.conversationKey(c.Space, c.ID)] = c
	}
	for k, v := range d.Runs {
		s.runs[k] = v
		s.totalRuns += v
	}
	return nil
}

func (s *Sim) saveLocked() {
	if s.opts.DataFile == "" {
		return
	}
	d := dataFile{Runs: s.runs}
	for _, c := range s.conversations {
		d.Conversations = append(d.Conversations, c)
	}
	b, err := json.Marshal(d)
	if err != nil {
		s.logf("save data file: %v", err)
		return
	}
	// Private (0600; on Windows an owner-only ACL), replaced by rename.
	tmp := s.opts.DataFile + ".tmp"
	f, err := ownfile.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.logf("save data file: %v", err)
		return
	}
	if err := ownfile.Rename(tmp, s.opts.DataFile); err != nil {
		s.logf("save data file: %v", err)
	}
}

// --- admin routes, for tests and scripts in other processes ---

func (s *Sim) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/__sim/runs" && r.Method == http.MethodGet:
		s.mu.Lock()
		resp := map[string]any{"total": s.totalRuns, "active": s.active}
		if ctx := r.URL.Query().Get("context_id"); ctx != "" {
			resp["runs"] = s.runs[ctx]
			if t, ok := s.completedAt[ctx]; ok {
				resp["completed_at"] = t.UTC().Format(time.RFC3339Nano)
			}
			if t, ok := s.endedAt[ctx]; ok {
				resp["ended_at"] = t.UTC().Format(time.RFC3339Nano)
			}
		} else {
			runs := map[string]int{}
			for k, v := range s.runs {
				runs[k] = v
			}
			resp["by_context"] = runs
		}
		s.mu.Unlock()
		writeJSON(w, r, http.StatusOK, resp, false)
	case r.URL.Path == "/__sim/faults" && r.Method == http.MethodGet:
		b, _ := yaml.Marshal(s.Faults())
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(b)
	case r.URL.Path == "/__sim/faults" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		// YAML, which JSON is too: the same keys and durations ("5s") as
		// the faults section of a config file.
		var f Faults
		dec := yaml.NewDecoder(io.LimitReader(r.Body, 1<<20))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil && err != io.EOF {
			http.Error(w, "faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.SetFaults(f)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// --- the listening server ---

// Server is a simulator listening on a loopback address.
type Server struct {
	*Sim
	// URL is the base URL, e.g. http://127.0.0.1:43121, with no trailing slash.
	URL string

	srv   *http.Server
	ln    net.Listener
	conns *connCounter
}

// NewServer starts a simulator on 127.0.0.1 at a free port. It panics if
// it cannot listen, as httptest.NewServer does.
func NewServer(opts Options) *Server {
	s, err := Listen("127.0.0.1:0", opts)
	if err != nil {
		panic("agentbuildertest: " + err.Error())
	}
	return s
}

// Listen starts a simulator on addr.
func Listen(addr string, opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	sim := New(opts)
	conns := &connCounter{}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second, ConnState: conns.state}
	go srv.Serve(ln)
	return &Server{Sim: sim, URL: "http://" + ln.Addr().String(), srv: srv, ln: ln, conns: conns}, nil
}

// Addr returns the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, drops open connections and stops the runs.
func (s *Server) Close() {
	s.srv.Close()
	s.Sim.Close()
}

// Shutdown stops listening and waits for open requests up to ctx, then
// stops the runs.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.Sim.Close()
	return err
}

// DataFileIn returns a data file path inside dir, for Options.DataFile.
func DataFileIn(dir string) string { return filepath.Join(dir, "agentbuilder-sim.json") }

func newUUID() string { return uuid.NewString() }
