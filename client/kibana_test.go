package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

const (
	testKey      = "dGVzdDprZXk="
	otherUserKey = "b3RoZXI6a2V5"
	prodOnlyKey  = "cHJvZDprZXk="
)

func testSimOptions() agentbuildertest.Options {
	return agentbuildertest.Options{
		Keys: []agentbuildertest.Key{
			{APIKey: testKey, Username: "svc-a2a"},
			{APIKey: otherUserKey, Username: "someone-else"},
			{APIKey: prodOnlyKey, Username: "prod-user", Spaces: []string{"prod"}},
		},
		Agents: []agentbuildertest.Agent{
			{ID: "echo", Name: "Echo", Description: "Echoes", Tools: []string{"platform.core.search"}, RunTime: 20 * time.Millisecond},
			{ID: "slow", Name: "Slow", RunTime: 600 * time.Millisecond, Tools: []string{"platform.core.search"}, ToolResultBytes: 4096},
			{ID: "broken", Name: "Broken", Fail: "No complete response received from chat service", RunTime: 10 * time.Millisecond},
			{ID: "says-error", Name: "Says error", Reply: "Error: this is the agent's real answer", RunTime: 10 * time.Millisecond},
			{ID: "asks", Name: "Asks", AwaitPrompt: "Delete 3 indices? Confirm or cancel.", RunTime: 10 * time.Millisecond},
			{ID: "prod-agent", Name: "Prod agent", Space: "prod", RunTime: 10 * time.Millisecond},
		},
	}
}

func startSim(t *testing.T, mod func(*agentbuildertest.Options)) *agentbuildertest.Server {
	t.Helper()
	o := testSimOptions()
	if mod != nil {
		mod(&o)
	}
	s := agentbuildertest.NewServer(o)
	t.Cleanup(s.Close)
	return s
}

func simClient(t *testing.T, sim *agentbuildertest.Server, key, space string) *Kibana {
	t.Helper()
	return newTestKibana(t, sim.URL, func(c *KibanaConfig) { c.APIKey = Secret(key); c.Space = space })
}

func TestListAgentsAndSpaces(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	agents, err := simClient(t, sim, testKey, "").ListAgents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range agents {
		ids = append(ids, a.ID)
	}
	if got := strings.Join(ids, ","); got != "asks,broken,echo,says-error,slow" {
		t.Errorf("default space agents = %s", got)
	}
	prod, err := simClient(t, sim, prodOnlyKey, "prod").ListAgents(context.Background())
	if err != nil || len(prod) != 1 || prod[0].ID != "prod-agent" {
		t.Fatalf("prod space: %v %v", prod, err)
	}
	_, err = simClient(t, sim, prodOnlyKey, "").ListAgents(context.Background())
	if KindOf(err) != KindForbidden {
		t.Errorf("key without the default space: got %v, want forbidden", err)
	}
	_, err = simClient(t, sim, "bm9wZTpub3Bl", "").ListAgents(context.Background())
	if KindOf(err) != KindAuth {
		t.Errorf("unknown key: got %v, want auth", err)
	}
}

func TestAgentCard(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.PublicBaseURL = "http://localhost:5601" })
	k := simClient(t, sim, testKey, "")
	card, err := k.AgentCard(context.Background(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if got := card.Get("protocolVersion").String(); got != "0.3.0" {
		t.Errorf("protocolVersion %q", got)
	}
	if card.Get("capabilities.streaming").Bool() {
		t.Error("streaming should be false")
	}
	if got := card.Get("url").String(); got != "http://localhost:5601/api/agent_builder/a2a/echo" {
		t.Errorf("card url %q", got)
	}
	if got := card.Get("skills.0.id").String(); got != "platform.core.search" {
		t.Errorf("skill %q", got)
	}
	if _, err := k.AgentCard(context.Background(), "nope"); KindOf(err) != KindNotFound {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := k.AgentCard(context.Background(), "../agents"); KindOf(err) != KindBadRequest {
		t.Errorf("path-escaping id: %v", err)
	}
	// 9.2 answers an unknown agent with a 500; it is still "not found".
	old := simClient(t, startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V92 }), testKey, "")
	if _, err := old.AgentCard(context.Background(), "nope"); KindOf(err) != KindNotFound {
		t.Errorf("9.2 unknown agent: %v", err)
	}
}

func TestSendMessage(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	k := simClient(t, sim, testKey, "")
	res, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hello", MessageID: "m1", ContextID: "ctx-1", Blocking: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "message" || res.Text != "Echo: hello" || res.ContextID != "ctx-1" || !strings.HasPrefix(res.MessageID, "msg-") {
		t.Errorf("got %+v", res)
	}
	if sim.Runs("ctx-1") != 1 {
		t.Errorf("runs = %d", sim.Runs("ctx-1"))
	}
}

func TestSendMessageWireFormat(t *testing.T) {
	t.Parallel()
	var got map[string]any
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		id := got["id"]
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"kind": "message", "role": "agent", "messageId": "msg-1", "parts": []any{map[string]any{"kind": "text", "text": "hi"}},
			"taskId": "t1", "contextId": "c1"}})
	}))
	defer srv.Close()
	k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Space = "prod" })
	if _, err := k.SendMessage(context.Background(), "a1", OutgoingMessage{Text: "q", MessageID: "m1", ContextID: "c1", Blocking: true}); err != nil {
		t.Fatal(err)
	}
	if header.Get("Authorization") != "ApiKey a2V5OnNlY3JldA==" || !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		t.Errorf("headers %v", header)
	}
	params := got["params"].(map[string]any)
	msg := params["message"].(map[string]any)
	if got["method"] != "message/send" || got["jsonrpc"] != "2.0" || msg["kind"] != "message" || msg["role"] != "user" ||
		msg["messageId"] != "m1" || msg["contextId"] != "c1" {
		t.Errorf("request %v", got)
	}
	if _, has := msg["taskId"]; has {
		t.Error("a new message must never carry a taskId")
	}
	if cfg := params["configuration"].(map[string]any); cfg["blocking"] != true {
		t.Errorf("blocking must be sent explicitly: %v", cfg)
	}
}

func TestSendMessageJSONRPCErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"message.messageId is required."}}`)
	}))
	defer srv.Close()
	_, err := newTestKibana(t, srv.URL).SendMessage(context.Background(), "a", OutgoingMessage{Text: "x", ContextID: "c"})
	var ce *Error
	if KindOf(err) != KindRPC || !errorsAs(err, &ce) || ce.RPCCode != -32602 || !strings.Contains(err.Error(), "messageId is required") {
		t.Fatalf("got %v", err)
	}
}

func errorsAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func TestConversationAfterCompletionOnly(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	k := simClient(t, sim, testKey, "")
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := k.SendMessage(ctx, "slow", OutgoingMessage{Text: "count errors", MessageID: "m", ContextID: "c-slow", Blocking: true})
		done <- err
	}()
	time.Sleep(150 * time.Millisecond)
	if _, err := k.GetConversation(ctx, "a2a-c-slow"); KindOf(err) != KindNotFound {
		t.Fatalf("during the run: got %v, want not found", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	conv, err := k.GetConversation(ctx, "a2a-c-slow")
	if err != nil {
		t.Fatal(err)
	}
	if conv.RoundCount() != 1 || conv.AgentID() != "slow" || conv.Title() == "" {
		t.Errorf("conversation: %d rounds, agent %q, title %q", conv.RoundCount(), conv.AgentID(), conv.Title())
	}
	r, _, ok := conv.PickRound(-1)
	if !ok || r.Input != "count errors" || r.Response != "Echo: count errors" || r.Status != "completed" {
		t.Errorf("round %+v", r)
	}
	// Another owner cannot read it.
	if _, err := simClient(t, sim, otherUserKey, "").GetConversation(ctx, "a2a-c-slow"); KindOf(err) != KindNotFound {
		t.Errorf("other owner: %v", err)
	}
}

func TestFailedRoundIsNeverStored(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	k := simClient(t, sim, testKey, "")
	res, err := k.SendMessage(context.Background(), "broken", OutgoingMessage{Text: "x", MessageID: "m", ContextID: "c-b", Blocking: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.LooksLikeAgentError() {
		t.Errorf("reply %q should look like an agent error", res.Text)
	}
	if _, err := k.GetConversation(context.Background(), "a2a-c-b"); KindOf(err) != KindNotFound {
		t.Errorf("a failed round was stored: %v", err)
	}
}

// TestIDChecksAgreeWithThePatterns checks the written-out id and space
// checks against the regular expressions they replace.
func TestIDChecksAgreeWithThePatterns(t *testing.T) {
	t.Parallel()
	idRE := regexp.MustCompile(`^[A-Za-z0-9_~@+-][A-Za-z0-9._~:@+-]{0,254}$`)
	spaceRE := regexp.MustCompile(`^[a-z0-9_-]{1,128}$`)
	cases := []string{"", "a", ".", ":", "..", "a.b", ".a", ":a", "a:", "a/b", "a b", "a\n", "é", "Prod", "prod-1", "x_y",
		"elastic-ai-agent", "a2a-3f6c2e1a-9b7d-4c1e-8f2a-0d5b6c7e8f90", "~x", "@x", "+x", "-x", "_x", "x$",
		strings.Repeat("a", 128), strings.Repeat("a", 129), strings.Repeat("a", 255), strings.Repeat("a", 256)}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, s := range cases {
		if got, want := ValidID(s), idRE.MatchString(s); got != want {
			t.Errorf("ValidID(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := ValidSpace(s), spaceRE.MatchString(s); got != want {
			t.Errorf("ValidSpace(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
