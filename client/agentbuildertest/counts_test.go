package agentbuildertest

import (
	"maps"
	"net/http"
	"testing"
)

// TestCountsRequestsByKind: every request is counted by its kind, the A2A
// POST by its JSON-RPC method, refused ones too; a request that is
// answered is no longer open.
func TestCountsRequestsByKind(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	base := s.URL + "/api/agent_builder/"
	if r := call(t, "POST", base+"a2a/echo", key, send("ctx-1", "hi")); r.status != 200 {
		t.Fatalf("send: %d %s", r.status, r.raw)
	}
	call(t, "POST", base+"a2a/echo", key, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": "x"}})
	call(t, "POST", base+"a2a/echo", key, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": map[string]any{}})
	call(t, "POST", base+"a2a/echo", key, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "nope"})
	call(t, "GET", base+"a2a/echo.json", key, nil)
	call(t, "GET", base+"conversations?agent_id=echo", key, nil)
	call(t, "GET", base+"conversations/a2a-ctx-1", key, nil)
	call(t, "GET", base+"conversations/a2a-ctx-1", "", nil) // refused: counted all the same
	call(t, "DELETE", base+"conversations/a2a-ctx-1", key, nil, "kbn-xsrf", "1")
	call(t, "GET", s.URL+"/api/status", key, nil)
	want := map[string]int{KindSend: 1, KindTasksGet: 1, KindStream: 1, KindA2AOther: 1, KindCard: 1,
		KindListConversations: 1, KindGetConversation: 2, KindDeleteConversation: 1, KindStatus: 1}
	if got := s.Counts(); !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if n := s.Count(KindGetConversation); n != 2 {
		t.Errorf("Count(get conversation) = %d", n)
	}
	if open := s.OpenRequests(); len(open) != 0 {
		t.Errorf("open after every answer: %v", open)
	}
	if m := s.MaxOpenRequests(); m[KindSend] != 1 {
		t.Errorf("max open %v", m)
	}
	http.DefaultClient.CloseIdleConnections()
	if _, maxOpen, accepted := s.Connections(); maxOpen < 1 || accepted < 1 {
		t.Errorf("connections: max %d, accepted %d", maxOpen, accepted)
	}
}
