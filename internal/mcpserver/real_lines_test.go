package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
)

// lineClient talks to Serve over pipes, a line at a time, as an assistant
// does over the server's stdin and stdout, which stays open until close.
type lineClient struct {
	t       *testing.T
	in      *io.PipeWriter
	answers chan map[string]any
	served  chan error
}

func serveOnPipes(t *testing.T, o mcpserver.Options) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, in: inW, answers: make(chan map[string]any, 100), served: make(chan error, 1)}
	go func() {
		c.served <- mcpserver.Serve(context.Background(), o, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("not JSON-RPC 2.0 on the output: %q", sc.Text())
				continue
			}
			c.answers <- m
		}
		close(c.answers)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

// send writes lines; a server that stopped reading its input fails the
// test (after a minute) instead of blocking it.
func (c *lineClient) send(lines ...string) {
	c.t.Helper()
	wrote := make(chan error, 1)
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(c.in, l+"\n"); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	select {
	case err := <-wrote:
		if err != nil {
			c.t.Fatalf("write %q: %v", lines, err)
		}
	case <-time.After(time.Minute):
		c.t.Fatalf("the server stopped reading its input: %q not read", lines)
	}
}

// next returns the next n answers (the test fails after a minute).
func (c *lineClient) next(n int) []map[string]any {
	c.t.Helper()
	var got []map[string]any
	deadline := time.After(time.Minute)
	for len(got) < n {
		select {
		case m, ok := <-c.answers:
			if !ok {
				c.t.Fatalf("the server's output ended after %v", got)
			}
			got = append(got, m)
		case <-deadline:
			c.t.Fatalf("timed out after %d answers of %d: %v", len(got), n, got)
		}
	}
	return got
}

func errorCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	return fmt.Sprint(e["code"])
}

// A message the SDK cannot read (not JSON, [], a batch, {"jsonrpc":"2.0"},
// version 1.0, an object id) is answered with a JSON-RPC error, id null
// where it cannot be read, and the server goes on: the send in flight gets
// its reply, a later request its answer, and the server ends only when
// its input does. An invalid response and a blank line get no answer.
func TestBadMessagesAnsweredAndServed(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	c := newCourier(t, sim)
	var log syncBuffer
	o := c.options()
	o.Log = &log
	cl := serveOnPipes(t, o)
	cl.send(initLine, initializedLine)
	if a := cl.next(1); fmt.Sprint(a[0]["id"]) != "1" || a[0]["result"] == nil {
		t.Fatalf("initialize: %v", a)
	}
	// paced-agent takes a second: the send is in flight while the bad
	// lines come.
	cl.send(`{"jsonrpc":"2.0","id":"send-1","method":"tools/call","params":{"name":"send","arguments":{"agent":"paced-agent","message":"q","wait_seconds":60}}}`)
	bad := map[string]string{ // line → the id and code of its answer
		`not json at all`:                         "<nil> -32700",
		`{"jsonrpc":"2.0","id":5,"method":"ping"`: "<nil> -32700",
		`[]`: "<nil> -32600",
		`[{"jsonrpc":"2.0","id":"in-batch","method":"ping"}]`: "<nil> -32600",
		`{"jsonrpc":"2.0"}`:                                      "<nil> -32600",
		`{"jsonrpc":"1.0","id":"v1","method":"ping"}`:            "v1 -32600",
		`{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`: "<nil> -32600",
		`"just a string"`:                                        "<nil> -32600",
		`{"id":7,"method":"ping"}`:                               "7 -32600",
		// The SDK's error quotes the version: the log line stays one line
		// of printable text, cut.
		`{"jsonrpc":"\u001b]52;c;aGk=\u0007` + strings.Repeat("x", 5000) + `","id":8,"method":"ping"}`: "8 -32600",
	}
	for line := range bad {
		cl.send(line)
	}
	// No answer: a blank line, and a response the SDK cannot read (an
	// answer of the client's to nothing, with a null id).
	cl.send("", "   ", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`)
	cl.send(`{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`)
	got := map[string]int{}
	var sendAnswer map[string]any
	for _, a := range cl.next(len(bad) + 2) {
		switch id := fmt.Sprint(a["id"]); id {
		case "send-1":
			sendAnswer = a
		case "ping-1":
			if a["result"] == nil {
				t.Errorf("ping: %v", a)
			}
		default:
			got[id+" "+errorCode(a)]++
		}
	}
	want := map[string]int{}
	for _, w := range bad {
		want[w]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("error answers %v, want %v", got, want)
	}
	res, doc := structured(sendAnswer)
	if res["isError"] == true || doc["state"] != "completed" || doc["reply"] != "paced: q" {
		t.Errorf("the send in flight: %v", sendAnswer)
	}
	cl.in.Close()
	if err := <-cl.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if extra := cl.next(0); len(extra) != 0 {
		t.Errorf("more answers: %v", extra)
	}
	if m, ok := <-cl.answers; ok {
		t.Errorf("an answer after the end: %v", m)
	}
	// An object id is named as what it is, not as Go's type of it.
	if l := log.String(); strings.Contains(l, "map[") || !strings.Contains(l, "error -32600: not a JSON-RPC 2.0 request: the id must be a string or an integer") {
		t.Errorf("the object id's answer: log %q", l)
	}
	if l := log.String(); strings.Count(l, "a2a-courier mcp: answered a message of ") != len(bad) || !strings.Contains(l, "dropped an invalid JSON-RPC response") ||
		strings.Contains(l, "not json at all") || strings.ContainsAny(l, "\x1b\x07") || strings.Contains(l, strings.Repeat("x", 201)) {
		t.Errorf("log %q", l)
	}
}
