package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A message the line reader refuses is answered in words a client's
// author reads, never the SDK's Go internals ("invalid ID type
// map[string]interface {}", "cannot unmarshal … into Go struct field
// jsonrpc2.wireDecode.jsonrpc of type string"), and without quoting the
// message (the server's log carries the answer's text).
func TestRefusalsSayWhyInWords(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`:   "null the id must be a string or an integer",
		`{"jsonrpc":"2.0","id":false,"method":"ping"}`:     "null the id must be a string or an integer",
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`:       "1.5 the id must be a string or an integer written in digits, from -9007199254740991 to 9007199254740991",
		`{"jsonrpc":"2.0","id":"\ud800x","method":"ping"}`: `"\ud800x" the id must be a string of UTF-8 text, without a lone UTF-16 surrogate (\ud800 alone)`,
		`"just a string"`: "null a JSON-RPC message is a JSON object",
		`5`:               "null a JSON-RPC message is a JSON object",
		`{"jsonrpc":"1.0","id":"v1","method":"ping"}`:            `"v1" the version must be "jsonrpc": "2.0"`,
		`{"jsonrpc":2,"id":3,"method":"ping"}`:                   `3 the version must be "jsonrpc": "2.0"`,
		`{"id":"no-version","method":"ping"}`:                    `"no-version" the version must be "jsonrpc": "2.0"`,
		`{"jsonrpc":"2.0","id":4,"method":5}`:                    "4 the method must be a string",
		`{"jsonrpc":"2.0"}`:                                      "null a request needs a method",
		`{"jsonrpc":"\u001b]52;c;aGk=\u0007","id":8,"method":1}`: `8 the version must be "jsonrpc": "2.0"`,
	} {
		var out, log bytes.Buffer
		if fwd := screen([]byte(line), false, &out, &log); fwd != nil {
			t.Errorf("%s: handed to the SDK", line)
			continue
		}
		var a struct {
			ID    json.RawMessage
			Error struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal(out.Bytes(), &a); err != nil || a.Error.Code != codeInvalidRequest {
			t.Errorf("%s: answered %q", line, out.String())
			continue
		}
		if got := string(a.ID) + " " + strings.TrimPrefix(a.Error.Message, "not a JSON-RPC 2.0 request: "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", line, got, want)
		}
		if l := log.String(); strings.Count(l, "\n") != 1 || strings.ContainsAny(l, "\x1b\x07") || !strings.Contains(l, a.Error.Message) {
			t.Errorf("%s: log %q", line, l)
		}
	}
}
