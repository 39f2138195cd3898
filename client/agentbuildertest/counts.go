package agentbuildertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
)

// Kinds of request the simulator counts (Counts, Count): one per route,
// and per JSON-RPC method on the A2A route, so that a test asserts the
// request pattern a client makes (how many list reads, how many reads of
// one conversation, how many sends), never how long anything took.
const (
	KindStatus             = "status"              // GET /api/status
	KindAgents             = "agents"              // GET /api/agent_builder/agents
	KindCard               = "card"                // GET /api/agent_builder/a2a/{id}.json
	KindListConversations  = "list conversations"  // GET /api/agent_builder/conversations
	KindGetConversation    = "get conversation"    // GET /api/agent_builder/conversations/{id}
	KindDeleteConversation = "delete conversation" // DELETE /api/agent_builder/conversations/{id}
	KindSend               = "message/send"        // A2A POST, method message/send
	KindStream             = "message/stream"      // A2A POST, method message/stream
	KindTasksGet           = "tasks/get"           // A2A POST, method tasks/get
	KindTasksCancel        = "tasks/cancel"        // A2A POST, method tasks/cancel
	KindResubscribe        = "tasks/resubscribe"   // A2A POST, method tasks/resubscribe
	KindA2AOther           = "a2a other"           // an A2A POST with another method, or none that could be read
)

// a2aKind is the kind of an A2A request by its JSON-RPC method.
func a2aKind(method string) string {
	switch method {
	case KindSend, KindStream, KindTasksGet, KindTasksCancel, KindResubscribe:
		return method
	}
	return KindA2AOther
}

// routeKind is the kind of a request to a route other than the A2A POST.
func routeKind(route, method string) string {
	switch route {
	case RouteConversations:
		return KindListConversations
	case RouteConversation:
		if method == http.MethodDelete {
			return KindDeleteConversation
		}
		return KindGetConversation
	}
	return route // status, agents, card: the route is the kind
}

// counter counts requests by kind, and the requests open now (received,
// not yet answered in full), by kind too.
type counter struct {
	mu      sync.Mutex
	total   map[string]int
	open    map[string]int
	maxOpen map[string]int

	// lists counts the list reads; endList is their number when a
	// context's last run ended, seenList when a read of its conversation
	// or task came after that end.
	lists    int
	endList  map[string]int
	seenList map[string]int
	// reads counts the reads of each context's conversation and task,
	// taskReads those of its task alone.
	reads, taskReads map[string]int
	// openReads is how many reads (every kind but the sends, streams,
	// cancels and deletes) are open now, maxOpenReads the most at once.
	openReads, maxOpenReads int
}

// readKind reports whether a kind is a read: a request a client may
// repeat (its answer changes nothing on the server).
func readKind(kind string) bool {
	switch kind {
	case KindStatus, KindAgents, KindCard, KindListConversations, KindGetConversation, KindTasksGet:
		return true
	}
	return false
}

func (c *counter) listed() {
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
}

func (c *counter) ended(contextID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endList == nil {
		c.endList, c.seenList = map[string]int{}, map[string]int{}
	}
	c.endList[contextID] = c.lists
	delete(c.seenList, contextID)
}

func (c *counter) looked(contextID string, task bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads == nil {
		c.reads, c.taskReads = map[string]int{}, map[string]int{}
	}
	c.reads[contextID]++
	if task {
		c.taskReads[contextID]++
	}
	if end, ok := c.endList[contextID]; ok {
		if _, seen := c.seenList[contextID]; !seen {
			c.seenList[contextID] = c.lists - end
		}
	}
}

// ListReadsBeforeLook returns how many conversation list reads began
// between the end of a context's last run and the first read of its
// conversation (or its task) after that end; ok is false when there was
// no such read. A client that reads a conversation only once the list
// shows it changed, and reads the list once per poll, reads it after one
// list read at most: the reply is not delayed past one poll (a count,
// never a time).
func (s *Sim) ListReadsBeforeLook(contextID string) (n int, ok bool) {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	n, ok = s.counts.seenList[contextID]
	return n, ok
}

func (c *counter) begin(kind string) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == nil {
		c.total, c.open, c.maxOpen = map[string]int{}, map[string]int{}, map[string]int{}
	}
	c.total[kind]++
	c.open[kind]++
	c.maxOpen[kind] = max(c.maxOpen[kind], c.open[kind])
	read := readKind(kind)
	if read {
		c.openReads++
		c.maxOpenReads = max(c.maxOpenReads, c.openReads)
	}
	return func() {
		c.mu.Lock()
		c.open[kind]--
		if read {
			c.openReads--
		}
		c.mu.Unlock()
	}
}

func (c *counter) snapshot(m map[string]int) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(m))
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// Counts returns how many requests of each kind (KindListConversations,
// KindSend, …) reached the simulator since it began, answered or not:
// the request pattern a test asserts, counts and never times.
func (s *Sim) Counts() map[string]int { return s.counts.snapshot(s.counts.total) }

// Count returns how many requests of one kind reached the simulator.
func (s *Sim) Count(kind string) int { return s.Counts()[kind] }

// OpenRequests returns the requests of each kind being handled now (an
// open A2A POST waits for its run on 9.2 to 9.5); MaxOpenRequests the
// most there were at once.
func (s *Sim) OpenRequests() map[string]int    { return s.counts.snapshot(s.counts.open) }
func (s *Sim) MaxOpenRequests() map[string]int { return s.counts.snapshot(s.counts.maxOpen) }

// MaxOpenReads returns the most reads (status, agents, card, the list, a
// conversation, tasks/get) that were open at once, of every kind together.
func (s *Sim) MaxOpenReads() int {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	return s.counts.maxOpenReads
}

// connCounter counts a listening server's open connections.
type connCounter struct {
	mu       sync.Mutex
	open     int
	maxOpen  int
	accepted int
}

func (c *connCounter) state(_ net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		c.open++
		c.accepted++
		c.maxOpen = max(c.maxOpen, c.open)
	case http.StateHijacked, http.StateClosed:
		c.open--
	}
}

// Connections returns the server's open TCP connections now, the most
// there were at once, and how many it accepted in all.
func (s *Server) Connections() (open, maxOpen, accepted int) {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return s.conns.open, s.conns.maxOpen, s.conns.accepted
}

// peekA2AKind reads an A2A POST's body for its JSON-RPC method, and puts
// the body back as it was read (a read that failed fails again where the
// handler reads it).
func (s *Sim) peekA2AKind(r *http.Request) string {
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
	if err == nil {
		err = io.EOF
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failingReader{err}))
	var env struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &env) != nil {
		return KindA2AOther
	}
	return a2aKind(env.Method)
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// Reads returns how many reads of a context's conversation (GET
// a2a-<contextId>) and of its task (tasks/get) reached the simulator.
func (s *Sim) Reads(contextID string) int {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	return s.counts.reads[contextID]
}

// TaskReads returns how many reads of a context's task (tasks/get)
// reached the simulator.
func (s *Sim) TaskReads(contextID string) int {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock()
	return s.counts.taskReads[contextID]
}
