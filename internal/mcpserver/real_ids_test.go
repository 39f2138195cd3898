package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
)

// rawAnswer is an answer as written: its id's JSON text, as it is.
type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serveRaw runs Serve on lines, its input ending after them, and returns
// the answers it wrote, in order, their ids as written.
func serveRaw(t *testing.T, c *courier, lines ...string) []rawAnswer {
	t.Helper()
	var out syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- mcpserver.Serve(context.Background(), c.options(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Serve did not return at the end of its input; it wrote %q", out.String())
	}
	var got []rawAnswer
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a rawAnswer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("not JSON-RPC: %q", l)
		}
		got = append(got, a)
	}
	return got
}

// Every answer carries its request's id exactly, or the request is refused
// with -32600 and its id as written: the SDK reads an id as a float64 and
// answers with an int64, so that 1.5 was answered 1, 99999999999999999999
// -9223372036854775808 and 9007199254740993 9007199254740992 (an answer
// the client matches to another request, or to none). A number id must be
// an integer written in digits within JavaScript's safe integers, a string
// id UTF-8 without a lone surrogate; one that is not is answered with its
// text as sent, and never run: a tools/call of send with id 2.5 sends
// nothing. An id of another type is refused in words (not the SDK's
// "invalid ID type map[string]interface {}"), id null; a response with
// such an id is dropped.
func TestIDsAnsweredExactlyOrRefused(t *testing.T) {
	t.Parallel()
	c := newCourier(t, startSim(t))
	const integerRule = "not a JSON-RPC 2.0 request: the id must be a string or an integer written in digits, from -9007199254740991 to 9007199254740991"
	const typeRule = "not a JSON-RPC 2.0 request: the id must be a string or an integer"
	const stringRule = "not a JSON-RPC 2.0 request: the id must be a string of UTF-8 text, without a lone UTF-16 surrogate (\\ud800 alone)"
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	cases := []struct{ id, answerID, message string }{
		{"1.5", "1.5", integerRule},
		{"99999999999999999999", "99999999999999999999", integerRule},
		{"9007199254740993", "9007199254740993", integerRule},
		{"-9007199254740992", "-9007199254740992", integerRule},
		{"1e2", "1e2", integerRule},
		{"7.0", "7.0", integerRule},
		{`"\ud800"`, `"\ud800"`, stringRule},
		{`"a\udc00b"`, `"a\udc00b"`, stringRule},
		{`{"a":1}`, "null", typeRule},
		{"[1]", "null", typeRule},
		{"true", "null", typeRule},
		// Answered, the id as sent.
		{"9007199254740991", "9007199254740991", ""},
		{"-9007199254740991", "-9007199254740991", ""},
		{"0", "0", ""},
		{`"x-1"`, `"x-1"`, ""},
		{`"\ud83d\ude00 \u00e9"`, `"😀 é"`, ""},
		{`"\ufffd"`, `"�"`, ""},
	}
	const initID = "1 "
	lines := []string{initLine, initializedLine}
	for _, tc := range cases {
		lines = append(lines, ping(tc.id))
	}
	// Never run, never answered.
	lines = append(lines, `{"jsonrpc":"2.0","id":2.5,"method":"tools/call","params":{"name":"send","arguments":{"agent":"audit-agent","message":"q"}}}`,
		`{"jsonrpc":"2.0","id":3.5,"result":{}}`)
	// The line reader answers what it refuses at once, the SDK the others
	// later: the answers are compared as a multiset, "<id> <message>".
	want := map[string]int{initID: 1, `2.5 ` + integerRule: 1}
	for _, tc := range cases {
		want[tc.answerID+" "+tc.message]++
	}
	got := map[string]int{}
	for _, a := range serveRaw(t, c, lines...) {
		switch {
		case a.Error != nil && a.Error.Code != -32600:
			t.Errorf("id %s: error %+v", a.ID, a.Error)
		case a.Error != nil:
			got[string(a.ID)+" "+a.Error.Message]++
		case a.Result == nil:
			t.Errorf("id %s: neither a result nor an error", a.ID)
		default:
			got[string(a.ID)+" "]++
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d answers %q, want %d", got[k], k, n)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("%d answers %q, want none", n, k)
		}
	}
	if n := c.ranCount(); n != 0 {
		t.Errorf("%d command lines ran: %v", n, c.lastRan())
	}
	if l := c.ledger(); len(l) != 0 {
		t.Errorf("tasks: %v", l)
	}
}
