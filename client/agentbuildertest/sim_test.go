package agentbuildertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

const key = "dGVzdDprZXk="

func testServer(t *testing.T, mod func(*Options)) *Server {
	t.Helper()
	o := Options{
		Keys: []Key{{APIKey: key, Username: "svc"}, {APIKey: "cHJvZA==", Username: "prod", Spaces: []string{"prod"}}},
		Agents: []Agent{
			{ID: "echo", Name: "Echo", Description: "d", Tools: []string{"platform.core.search"}, RunTime: 10 * time.Millisecond},
			{ID: "slow", Name: "Slow", RunTime: 400 * time.Millisecond},
			{ID: "prod-agent", Name: "P", Space: "prod"},
		},
	}
	if mod != nil {
		mod(&o)
	}
	s := NewServer(o)
	t.Cleanup(s.Close)
	return s
}

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func call(t *testing.T, method, url, auth string, body any, hdr ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if auth != "" {
		req.Header.Set("Authorization", "ApiKey "+auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resp{status: res.StatusCode, header: res.Header, body: m, raw: string(raw)}
}

func send(ctxID, text string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": "r1", "method": "message/send", "params": map[string]any{
		"message": map[string]any{"kind": "message", "role": "user", "messageId": "m-" + ctxID, "contextId": ctxID,
			"parts": []any{map[string]any{"kind": "text", "text": text}, map[string]any{"kind": "data", "data": map[string]any{}}, map[string]any{"kind": "text", "text": "more"}}},
		"configuration": map[string]any{"blocking": true}}}
}

func TestRoutesAuthAndSpaces(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	tests := []struct {
		name, method, path, auth string
		want                     int
		hdr                      []string
	}{
		{"agents", "GET", "/api/agent_builder/agents", key, 200, nil},
		{"agents default space prefix", "GET", "/s/default/api/agent_builder/agents", key, 200, nil},
		{"no key", "GET", "/api/agent_builder/agents", "", 401, nil},
		{"unknown key", "GET", "/api/agent_builder/agents", "bm9wZQ==", 401, nil},
		{"key without the space", "GET", "/api/agent_builder/agents", "cHJvZA==", 403, nil},
		{"key with the space", "GET", "/s/prod/api/agent_builder/agents", "cHJvZA==", 200, nil},
		{"card", "GET", "/api/agent_builder/a2a/echo.json", key, 200, nil},
		{"card of an agent in another space", "GET", "/api/agent_builder/a2a/prod-agent.json", key, 404, nil},
		{"unknown route", "GET", "/api/agent_builder/nothing", key, 404, nil},
		{"api version ok", "GET", "/api/agent_builder/agents", key, 200, []string{"elastic-api-version", "2023-10-31"}},
		{"api version unknown", "GET", "/api/agent_builder/agents", key, 400, []string{"elastic-api-version", "1999-01-01"}},
		{"conversation not found", "GET", "/api/agent_builder/conversations/a2a-x", key, 404, nil},
		{"delete without kbn-xsrf", "DELETE", "/api/agent_builder/conversations/a2a-x", key, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tt.method, s.URL+tt.path, tt.auth, nil, tt.hdr...)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.raw)
			}
			if r.status >= 400 {
				if r.body["statusCode"] != float64(r.status) || r.body["message"] == nil {
					t.Errorf("not a Kibana error envelope: %s", r.raw)
				}
			}
		})
	}
	r := call(t, "GET", s.URL+"/api/agent_builder/agents", "", nil)
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
}

func TestCardAsKibanaBuildsIt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version Version
		wantURL string
	}{
		{V92, "/api/agent_builder/a2a/prod-agent"},
		{V95, "/s/prod/api/agent_builder/a2a/prod-agent"},
	} {
		s := testServer(t, func(o *Options) { o.Version = tt.version })
		r := call(t, "GET", s.URL+"/s/prod/api/agent_builder/a2a/prod-agent.json", "cHJvZA==", nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", tt.version, r.status, r.raw)
		}
		if got := r.body["url"]; got != s.URL+tt.wantURL {
			t.Errorf("%s: card url %v, want %s", tt.version, got, s.URL+tt.wantURL)
		}
		if r.body["protocolVersion"] != "0.3.0" || r.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("%s: card %s headers %v", tt.version, r.raw, r.header)
		}
		caps := r.body["capabilities"].(map[string]any)
		if caps["streaming"] != false || caps["pushNotifications"] != false {
			t.Errorf("capabilities %v", caps)
		}
	}
	s := testServer(t, func(o *Options) { o.Version = V92 })
	if r := call(t, "GET", s.URL+"/api/agent_builder/a2a/nope.json", key, nil); r.status != 500 || !strings.Contains(r.raw, "Agent nope not found") {
		t.Errorf("9.2 unknown agent card: %d %s", r.status, r.raw)
	}
	s = testServer(t, nil)
	if r := call(t, "GET", s.URL+"/api/agent_builder/a2a/nope.json", key, nil); r.status != 404 || !strings.Contains(r.raw, "[agentNotFound]") {
		t.Errorf("9.5 unknown agent card: %d %s", r.status, r.raw)
	}
}

func TestMessageSendAndConversation(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	r := call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c1", "hello"))
	if r.status != 200 || r.body["id"] != "r1" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	res := r.body["result"].(map[string]any)
	if res["kind"] != "message" || res["role"] != "agent" || res["contextId"] != "c1" || !strings.HasPrefix(res["messageId"].(string), "msg-") || res["taskId"] == "" {
		t.Errorf("result %v", res)
	}
	// Text parts are joined with a space; other parts are ignored.
	if text := res["parts"].([]any)[0].(map[string]any)["text"]; text != "Echo: hello more" {
		t.Errorf("reply %q", text)
	}
	c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c1", key, nil)
	if c.status != 200 || c.body["agent_id"] != "echo" || c.body["user"].(map[string]any)["username"] != "svc" {
		t.Fatalf("conversation %d %s", c.status, c.raw)
	}
	round := c.body["rounds"].([]any)[0].(map[string]any)
	if round["input"].(map[string]any)["message"] != "hello more" || round["status"] != "completed" {
		t.Errorf("round %v", round)
	}
	if !strings.Contains(c.raw, ReasoningMarker) || !strings.Contains(c.raw, ToolResultMarker) {
		t.Error("the stored round lacks reasoning and tool steps")
	}
	// A second message appends a round.
	call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c1", "again"))
	c = call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c1", key, nil)
	if n := len(c.body["rounds"].([]any)); n != 2 {
		t.Errorf("rounds = %d", n)
	}
	if s.Runs("c1") != 2 {
		t.Errorf("runs = %d", s.Runs("c1"))
	}
}

func TestJSONRPCErrors(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	rpc := func(method string, params any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
	}
	tests := []struct {
		name string
		body any
		code float64
		msg  string
	}{
		{"tasks/get", rpc("tasks/get", map[string]any{"id": "t1"}), -32001, "Task not found: t1"},
		{"tasks/cancel", rpc("tasks/cancel", map[string]any{"id": "t1"}), -32001, "Task not found: t1"},
		{"stream", rpc("message/stream", map[string]any{}), -32004, "Unsupported operation: Method message/stream requires streaming capability."},
		{"push", rpc("tasks/pushNotificationConfig/set", map[string]any{}), -32003, "Push Notification is not supported"},
		{"extended card", rpc("agent/getAuthenticatedExtendedCard", nil), -32007, "Extended card not configured."},
		{"unknown method", rpc("nope", nil), -32601, "Method not found: nope"},
		{"bad version", map[string]any{"jsonrpc": "1.0", "id": 7, "method": "message/send"}, -32600, "Invalid JSON-RPC Request."},
		{"no messageId", rpc("message/send", map[string]any{"message": map[string]any{"parts": []any{}}}), -32602, "message.messageId is required."},
		{"taskId on a new message", rpc("message/send", map[string]any{"message": map[string]any{"messageId": "m", "taskId": "t9", "parts": []any{}}}), -32001, "Task not found: t9"},
	}
	for _, tt := range tests {
		r := call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, tt.body)
		if r.status != 200 {
			t.Errorf("%s: HTTP %d, want 200", tt.name, r.status)
			continue
		}
		e, _ := r.body["error"].(map[string]any)
		if e["code"] != tt.code || e["message"] != tt.msg {
			t.Errorf("%s: %s", tt.name, r.raw)
		}
	}
	if s.TotalRuns() != 0 {
		t.Errorf("refused requests ran %d times", s.TotalRuns())
	}
	// Content-Type and body checks happen before JSON-RPC.
	req, _ := http.NewRequest("POST", s.URL+"/api/agent_builder/a2a/echo", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Content-Type", "text/plain")
	res, _ := http.DefaultClient.Do(req)
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Errorf("text/plain: %d", res.StatusCode)
	}
	if r := call(t, "POST", s.URL+"/api/agent_builder/a2a/nope", key, send("c", "x")); r.status != 404 {
		t.Errorf("unknown agent POST: %d", r.status)
	}
	big := send("c", strings.Repeat("x", 2<<20))
	if r := call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, big); r.status != 413 {
		t.Errorf("2 MiB body: %d", r.status)
	}
}

func TestConversationWrittenOnlyAtCompletion(t *testing.T) {
	t.Parallel()
	for _, precreate := range []bool{false, true} {
		t.Run(fmt.Sprintf("precreate=%v", precreate), func(t *testing.T) {
			t.Parallel()
			s := testServer(t, func(o *Options) { o.PrecreateEmpty = precreate })
			done := make(chan struct{})
			go func() {
				call(t, "POST", s.URL+"/api/agent_builder/a2a/slow", key, send("c-slow", "q"))
				close(done)
			}()
			time.Sleep(100 * time.Millisecond)
			c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-slow", key, nil)
			if precreate {
				if c.status != 200 || len(c.body["rounds"].([]any)) != 0 || c.body["title"] != "[A2A] a2a-c-slow" {
					t.Errorf("during the run: %d %s", c.status, c.raw)
				}
			} else if c.status != 404 || c.body["message"] != "Conversation a2a-c-slow not found" {
				t.Errorf("during the run: %d %s", c.status, c.raw)
			}
			<-done
			c = call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-slow", key, nil)
			if c.status != 200 || len(c.body["rounds"].([]any)) != 1 {
				t.Errorf("after the run: %d %s", c.status, c.raw)
			}
		})
	}
}

func TestFailingRunsStoreNothing(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(o *Options) { o.Faults.FailRuns = 1; o.Faults.FailReason = "model timeout" })
	r := call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-f", "q"))
	text := r.body["result"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]
	if text != "Error: model timeout" {
		t.Errorf("reply %q", text)
	}
	if c := call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-f", key, nil); c.status != 404 {
		t.Errorf("a failed round was stored: %s", c.raw)
	}
	// Only the next run failed.
	r = call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-g", "q"))
	if text := r.body["result"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]; text != "Echo: q more" {
		t.Errorf("second run %q", text)
	}
}

func TestProxyCutAndIdleCloseLeaveTheRunGoing(t *testing.T) {
	t.Parallel()
	t.Run("proxy 502", func(t *testing.T) {
		t.Parallel()
		s := testServer(t, func(o *Options) { o.Faults.ProxyCutAfter = 100 * time.Millisecond })
		start := time.Now()
		r := call(t, "POST", s.URL+"/api/agent_builder/a2a/slow", key, send("c-p", "q"))
		if r.status != 502 || !strings.Contains(r.raw, "502 Bad Gateway") || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		if time.Since(start) > 350*time.Millisecond {
			t.Logf("the cut came late (%s): a busy machine", time.Since(start))
		}
		waitFor(t, func() bool {
			return call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-p", key, nil).status == 200
		})
		if s.Runs("c-p") != 1 {
			t.Errorf("runs %d", s.Runs("c-p"))
		}
	})
	t.Run("idle close", func(t *testing.T) {
		t.Parallel()
		s := testServer(t, func(o *Options) { o.Faults.IdleCloseAfter = 100 * time.Millisecond })
		b, _ := json.Marshal(send("c-i", "q"))
		req, _ := http.NewRequest("POST", s.URL+"/api/agent_builder/a2a/slow", bytes.NewReader(b))
		req.Header.Set("Authorization", "ApiKey "+key)
		req.Header.Set("Content-Type", "application/json")
		_, err := http.DefaultClient.Do(req)
		if err == nil {
			t.Fatal("the connection was not dropped")
		}
		waitFor(t, func() bool {
			return call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-i", key, nil).status == 200
		})
	})
	t.Run("client gone", func(t *testing.T) {
		t.Parallel()
		s := testServer(t, nil)
		b, _ := json.Marshal(send("c-g", "q"))
		req, _ := http.NewRequest("POST", s.URL+"/api/agent_builder/a2a/slow", bytes.NewReader(b))
		req.Header.Set("Authorization", "ApiKey "+key)
		req.Header.Set("Content-Type", "application/json")
		c := &http.Client{Timeout: 50 * time.Millisecond}
		if _, err := c.Do(req); err == nil {
			t.Fatal("expected a client timeout")
		}
		waitFor(t, func() bool {
			return call(t, "GET", s.URL+"/api/agent_builder/conversations/a2a-c-g", key, nil).status == 200
		})
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStatusFaultsCountDown(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(o *Options) {
		o.Faults.Statuses = []StatusFault{{Route: RouteAgents, Status: 429, RetryAfter: "2", Times: 2}}
	})
	for i, want := range []int{429, 429, 200} {
		r := call(t, "GET", s.URL+"/api/agent_builder/agents", key, nil)
		if r.status != want {
			t.Errorf("request %d: %d, want %d", i, r.status, want)
		}
		if want == 429 && r.header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
	}
}

func TestConversationListVersions(t *testing.T) {
	t.Parallel()
	fill := func(s *Server, n int) {
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; i < n; i++ {
			s.PutConversation("", fmt.Sprintf("conv-%04d", i), "echo", "svc", fmt.Sprintf("Title %d", i), base.Add(time.Duration(i)*time.Minute))
		}
		s.PutConversation("", "not-mine", "echo", "other", "x", base)
		s.PutConversation("prod", "other-space", "echo", "svc", "x", base)
	}
	old := testServer(t, nil)
	fill(old, 1200)
	r := call(t, "GET", old.URL+"/api/agent_builder/conversations", key, nil)
	results := r.body["results"].([]any)
	if len(results) != 1000 || r.body["pagination"] != nil {
		t.Fatalf("9.5 list: %d results, pagination %v", len(results), r.body["pagination"])
	}
	if _, has := results[0].(map[string]any)["rounds"]; has {
		t.Error("the list carries rounds")
	}
	newer := testServer(t, func(o *Options) { o.Version = V96 })
	fill(newer, 1200)
	r = call(t, "GET", newer.URL+"/api/agent_builder/conversations?page=2&per_page=500", key, nil)
	p := r.body["pagination"].(map[string]any)
	results = r.body["results"].([]any)
	if p["total"] != float64(1200) || p["page"] != float64(2) || len(results) != 500 {
		t.Fatalf("9.6 page 2: %v, %d results", p, len(results))
	}
	if first := results[0].(map[string]any)["id"]; first != "conv-0699" {
		t.Errorf("9.6 order: first of page 2 is %v, want conv-0699 (newest first)", first)
	}
	if r := call(t, "GET", newer.URL+"/api/agent_builder/conversations?page=11&per_page=1000", key, nil); r.status != 400 {
		t.Errorf("page*per_page > 10000: %d", r.status)
	}
	r = call(t, "GET", newer.URL+"/api/agent_builder/conversations?agent_id=nobody", key, nil)
	if n := len(r.body["results"].([]any)); n != 0 {
		t.Errorf("agent filter: %d", n)
	}
}

func TestGzipResponses(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(o *Options) {
		o.Agents[0].ToolResultBytes = 64 << 10
	})
	call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-z", "q"))
	req, _ := http.NewRequest("GET", s.URL+"/api/agent_builder/conversations/a2a-c-z", nil)
	req.Header.Set("Authorization", "ApiKey "+key)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Encoding") != "gzip" || res.ContentLength <= 0 {
		t.Errorf("headers %v", res.Header)
	}
}

func TestDataFileKeepsConversationsAcrossRestarts(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "sim.json")
	s := testServer(t, func(o *Options) { o.DataFile = file })
	call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-d", "kept"))
	s.Close()
	if p := ownfiletest.FileProblem(file); p != "" { // 0600; an owner-only ACL on Windows
		t.Fatalf("data file: %s", p)
	}
	s2 := testServer(t, func(o *Options) { o.DataFile = file })
	if c := call(t, "GET", s2.URL+"/api/agent_builder/conversations/a2a-c-d", key, nil); c.status != 200 {
		t.Errorf("after restart: %d %s", c.status, c.raw)
	}
	if s2.Runs("c-d") != 1 {
		t.Errorf("runs after restart %d", s2.Runs("c-d"))
	}
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	call(t, "POST", s.URL+"/api/agent_builder/a2a/echo", key, send("c-a", "q"))
	r := call(t, "GET", s.URL+"/__sim/runs?context_id=c-a", "", nil)
	if r.body["runs"] != float64(1) || r.body["completed_at"] == nil {
		t.Errorf("runs: %s", r.raw)
	}
	b := bytes.NewBufferString(`{"proxy_cut_after":"5s","fail_runs":3}`)
	req, _ := http.NewRequest("PUT", s.URL+"/__sim/faults", b)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 204 {
		t.Fatalf("put faults: %v %v", res, err)
	}
	res.Body.Close()
	if f := s.Faults(); f.ProxyCutAfter != 5*time.Second || f.FailRuns != 3 {
		t.Errorf("faults %+v", f)
	}
	res, err = http.Get(s.URL + "/__sim/faults")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(got), "proxy_cut_after: 5s") {
		t.Errorf("GET faults: %s", got)
	}
}

func TestLoadOptions(t *testing.T) {
	t.Parallel()
	o, err := LoadOptions(strings.NewReader(`
version: "9.2"
keys:
  - {api_key: abc, username: me, spaces: [default]}
agents:
  - {id: a1, name: A, run_time: 1500ms, tools: [t1], tool_result_bytes: 1024}
faults:
  proxy_cut_after: 30s
  statuses:
    - {route: conversation, status: 503, retry_after: "5", times: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	if o.Version != V92 || o.Agents[0].RunTime != 1500*time.Millisecond || o.Faults.ProxyCutAfter != 30*time.Second || o.Faults.Statuses[0].Times != 2 {
		t.Errorf("%+v", o)
	}
	for _, bad := range []string{"versionn: 9.2", "version: '8.0'", "agents: [{name: x}]", "faults: {statuses: [{route: nope, status: 500}]}"} {
		if _, err := LoadOptions(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	// An unknown key is named with where it is, in the file's terms, not
	// as a field of a Go type.
	for bad, want := range map[string]string{
		"agents:\n  - {id: a1, name: A, bogus_key: 1}\n": "simulator config: line 2: unknown key bogus_key in an agent",
		"versionn: 9.2\n": "simulator config: line 1: unknown key versionn at the top level",
		"faults: {statuses: [{route: conversation, status: 503, nope: 1}]}\n": "simulator config: line 1: unknown key nope in a status fault",
	} {
		if _, err := LoadOptions(strings.NewReader(bad)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", bad, err, want)
		}
	}
}
