package mcpserver_test

import (
	"strings"
	"testing"
)

// The text of result on several tasks names each task once on its line,
// as the CLI's lines do (cmd/cli printResults): a failed task's line gives
// the reason without "task X failed:" again, and a contextId this machine
// has no record of reads "no local record on this machine", the hint
// (the fetch tool that asks the server) on a line of its own.
func TestResultOfSeveralNamesEachTaskOnce(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	s := connect(t, c.options())

	_, doc, _ := s.call("send_async", map[string]any{"agent": "flaky-agent", "message": "try"})
	failed, _ := doc["context_id"].(string)
	_, doc, _ = s.call("send_async", map[string]any{"agent": "audit-agent", "message": "q"})
	done, _ := doc["context_id"].(string)
	const unknown = "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"
	if failed == "" || done == "" {
		t.Fatalf("send_async: %q %q", failed, done)
	}
	res, doc, text := s.call("result", map[string]any{"context_ids": []string{failed, done, unknown}, "wait_seconds": 60})
	if doc["pending"] != nil {
		t.Fatalf("still running: %v %q", doc, text)
	}
	lines := strings.Split(text, "\n")
	want := []string{
		"task " + failed + ": failed: No complete response received from chat service",
		"task " + done + ": completed",
		reply("q"),
		"task " + unknown + ": not_found: no local record on this machine",
		`hint: started on another machine or with another state directory? the fetch tool with context_id "` + unknown + `" asks the server`,
	}
	if !res.IsError || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("result of several: %v\n got: %q\nwant: %q", res.IsError, lines, want)
	}
	for _, l := range lines {
		for _, id := range []string{failed, done, unknown} {
			if n := strings.Count(l, id); n > 1 {
				t.Errorf("line %q names %s %d times", l, id, n)
			}
		}
	}
}

// An id the store cannot hold is refused by the command itself, and its
// hint is in tool terms: the context_id a tool returned, not "the
// contextId printed by send-async".
func TestBadIDHintInToolTerms(t *testing.T) {
	t.Parallel()
	c := newCourier(t, startSim(t))
	s := connect(t, c.options())
	for tool, want := range map[string]string{
		"result": "invalid contextId \"a b\": use letters, digits and . _ ~ : @ + - (at most 200, not starting with '.')\nhint: pass the context_id that the send or send_async tool returned",
		"cancel": "\nhint: pass the context_id that the send or send_async tool returned, or a task id",
	} {
		res, _, text := s.call(tool, map[string]any{"context_id": "a b"})
		if !res.IsError || !strings.Contains(text, want) || strings.Contains(text, "printed by send-async") {
			t.Errorf("%s: %v %q", tool, res.IsError, text)
		}
	}
}
