package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
)

const (
	initLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsListLine   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// serveLines runs Serve on lines, its input ending right after them, and
// returns the answers it wrote, by id. Serve must return within a minute.
func serveLines(t *testing.T, o mcpserver.Options, lines ...string) map[string]map[string]any {
	t.Helper()
	var out syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), o, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Serve did not return at the end of its input; it wrote %q", out.String())
	}
	got := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON-RPC: %q", l)
		}
		if id, ok := m["id"]; ok {
			got[fmt.Sprint(id)] = m
		}
	}
	return got
}

func structured(answer map[string]any) (res, doc map[string]any) {
	res, _ = answer["result"].(map[string]any)
	doc, _ = res["structuredContent"].(map[string]any)
	return res, doc
}

// Every request read is answered before Serve returns on the end of its
// input, whatever its method: the client that writes its requests and
// closes its end at once still gets every answer, and the task its
// send_async started goes on in its worker to the reply (one run).
func TestEveryRequestAnsweredAtEOF(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	got := serveLines(t, c.options(), initLine, initializedLine, toolsListLine)
	if len(got) != 2 || got["1"]["result"] == nil || got["2"]["result"] == nil {
		t.Fatalf("answers %v", got)
	}
	if tools, _ := got["2"]["result"].(map[string]any)["tools"].([]any); len(tools) != 10 {
		t.Errorf("tools/list: %v", got["2"])
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_async","arguments":{"agent":"audit-agent","message":"closed at once"}}}`
	got = serveLines(t, c.options(), initLine, initializedLine, call)
	res, doc := structured(got["3"])
	id, _ := doc["context_id"].(string)
	if len(got) != 2 || res["isError"] == true || doc["state"] != "queued" || id == "" {
		t.Fatalf("send_async: %v", got)
	}
	out, code := c.cli("", "result", id, "--wait", "--timeout", "60s", "--json")
	var task struct{ State, Reply string }
	if err := json.Unmarshal([]byte(out), &task); err != nil || code != 0 || task.State != "completed" || task.Reply != reply("closed at once") || sim.Runs(id) != 1 {
		t.Errorf("the task: %d %s, %d runs", code, out, sim.Runs(id))
	}
}

// At the end of the input, a call that waits is ended and answers still
// running, its task left to a worker; a send that has not recorded its
// task yet (the simulator answers the lookup of its agent late) is let to
// record it first, and is ended once it has: its task is not dropped as
// unsent, and reaches the agent once.
func TestCallsEndedAtEOF(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	out, code := c.cli("earlier", "send-async", "slow-agent", "-", "--json")
	var sent struct {
		ContextID string `json:"context_id"`
	}
	if err := json.Unmarshal([]byte(out), &sent); err != nil || code != 0 {
		t.Fatalf("send-async: %d %v %q", code, err, out)
	}
	sim.SetFaults(agentbuildertest.Faults{ResponseDelay: 300 * time.Millisecond})
	result := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"result","arguments":{"context_id":"` + sent.ContextID + `","wait_seconds":600}}}`
	send := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send","arguments":{"agent":"slow-agent","message":"q","wait_seconds":600}}}`
	o := c.options()
	o.StopGrace = 10 * time.Minute
	got := serveLines(t, o, initLine, initializedLine, result, send)
	_, doc := structured(got["4"])
	id, _ := doc["context_id"].(string)
	for call, ctxID := range map[string]string{"3": sent.ContextID, "4": id} {
		res, doc := structured(got[call])
		if res["isError"] == true || ctxID == "" || doc["context_id"] != ctxID ||
			!strings.Contains(fmt.Sprint(res["content"]), "still running (context "+ctxID+", state ") {
			t.Errorf("call %s: %v", call, got[call])
		}
	}
	if id == sent.ContextID {
		t.Fatalf("the send: %v", got["4"])
	}
	waitUntil(t, "the send's run on the simulator", 30*time.Second, func() bool { return sim.Runs(id) == 1 })
	out, _ = c.cli("", "tasks", "--state", "running", "--json")
	if !strings.Contains(out, id) || !strings.Contains(out, sent.ContextID) {
		t.Errorf("the running tasks: %s", out)
	}
}

// A send that never records its task (the lookup of its agent's card is
// not answered) is ended all the same once half the grace has passed, and
// answers, an error: nothing recorded, nothing sent.
func TestUnrecordedSendForcedAtEOF(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	sim.SetFaults(agentbuildertest.Faults{ResponseDelay: 10 * time.Minute})
	send := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send","arguments":{"agent":"audit-agent","message":"q"}}}`
	o := c.options()
	o.StopGrace = 400 * time.Millisecond
	got := serveLines(t, o, initLine, initializedLine, send)
	res, _ := structured(got["4"])
	text := fmt.Sprint(res["content"])
	if res["isError"] != true || !strings.Contains(text, "did not finish (the MCP server is stopping)") || strings.Contains(text, "network") {
		t.Errorf("send: %v", got)
	}
	sim.SetFaults(agentbuildertest.Faults{})
	if l := c.ledger(); len(l) != 0 || sim.TotalRuns() != 0 {
		t.Errorf("a task of the unrecorded send: %v, %d runs", l, sim.TotalRuns())
	}
}

// A command that panics is a tool error with a one-line message and a
// hint; the stack goes to the server's log only, and the server goes on
// serving. No command of the CLI panics on purpose: the runner here is the
// real CLI but for history, which panics as a bug would (a transport-level
// test of the adapter's recovery, not of the commands).
func TestPanicIsAToolError(t *testing.T) {
	t.Parallel()
	c := newCourier(t, startSim(t))
	o := c.options()
	o.Run = func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, ev mcpserver.Events) int {
		if args[0] == "history" {
			var m map[string]int
			m["boom"]++ // a nil map: a runtime panic
		}
		return c.run(ctx, args, stdin, stdout, stderr, ev)
	}
	var log syncBuffer
	o.Log = &log
	s := connect(t, o)
	res, doc, text := s.call("history", nil)
	lines := strings.Split(text, "\n")
	if !res.IsError || len(lines) != 2 || !strings.Contains(lines[0], "history stopped on an internal error") || !strings.HasPrefix(lines[1], "hint: ") ||
		strings.Contains(text, "goroutine") || strings.Contains(text, "nil map") {
		t.Errorf("text %q", text)
	}
	if errDoc, _ := doc["error"].(map[string]any); errDoc["code"] != "unexpected" {
		t.Errorf("structured %v", doc)
	}
	if l := log.String(); !strings.Contains(l, "internal error in history: assignment to entry in nil map") || !strings.Contains(l, "goroutine") {
		t.Errorf("log %q", l)
	}
	if res, doc, _ := s.call("send", map[string]any{"agent": "audit-agent", "message": "after"}); res.IsError || doc["reply"] != reply("after") {
		t.Errorf("the server after the panic: %v %v", res.IsError, doc)
	}
}
