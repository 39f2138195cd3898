package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzServeLines feeds Serve, the real server over its real line reader,
// arbitrary lines (the input split at its newlines, at most 64), each
// followed by a valid request of the test's (a ping, tools/list, or a
// tools/call of history, whose command prints a document; the last line
// is one too), then ends its
// input. The test's requests carry ids of a random nonce no input can
// guess. It checks:
//
//   - Serve returns nil once its input ends, never before (the last
//     request, after every line, is answered);
//   - every line written is a JSON-RPC 2.0 message;
//   - each request of the test's gets exactly one answer, a result;
//   - each line that is not JSON gets one parse error (-32700) with id
//     null, and nothing else does; each that is JSON but not an object
//     gets an invalid request (-32600) with id null;
//   - no line gets more than one answer: the answers to ids other than
//     the test's number at most the lines given;
//   - every answer's id is its request's exactly: each answer with an id
//     other than null and the test's takes one of the ids the lines
//     carry, compared as a JavaScript client compares them (a string as
//     its UTF-16 code units, so that a lone surrogate answered as U+FFFD
//     differs; an integer as its value; any other number as its text, so
//     that 1.5 answered 1 differs).
func FuzzServeLines(f *testing.F) {
	for _, s := range []string{
		"not json", "[]", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null,"result":{}}`, `{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"nope"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		initLineForFuzz, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"history","arguments":{"limit":-1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nosuch"}}`, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":5}`,
		"\r", "  {\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}  \r", `{"jsonrpc":"2.0","id":6,"method":"ping"} {"x":1}`, `"x"`, "1", "null", "true",
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"roots":{}},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`, strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `{"jsonrpc":"2.0","id":1e2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, `{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":2.5,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > 64 {
			lines = lines[:64]
		}
		nonce := fmt.Sprintf("%016x", rand.Uint64())
		var in bytes.Buffer
		probes := map[string]bool{}
		probe := func(i int) {
			id := fmt.Sprintf("probe-%s-%d", nonce, i)
			probes[id] = true
			switch i % 8 { // mostly pings: tools/list is a large answer
			case 1:
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%q,"method":"tools/list"}`+"\n", id)
			case 2, 5:
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"history","arguments":{}}}`+"\n", id)
			default:
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%q,"method":"ping"}`+"\n", id)
			}
		}
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"init-%s","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`+"\n", nonce)
		in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		probes["init-"+nonce] = true
		notJSON, notObject, given := 0, 0, 0
		sentIDs := idsOf(lines)
		for i, l := range lines {
			in.Write(l)
			in.WriteByte('\n')
			switch msg := bytes.Trim(l, " \t\r\n"); {
			case len(msg) == 0:
			case !json.Valid(msg):
				notJSON++
				given++
			case msg[0] != '{':
				notObject++
				given++
			default:
				given++
			}
			probe(i)
		}
		probe(len(lines))
		out := serveFuzz(t, &in)
		var nullParse, nullInvalid, others int
		answered := map[string]int{}
		for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  *string         `json:"method"`
				Result  json.RawMessage `json:"result"`
				Error   *struct{ Code int }
			}
			if err := json.Unmarshal(l, &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("not a JSON-RPC 2.0 message: %q", l)
			}
			if m.Method != nil {
				continue // the server's own request or notification
			}
			if (m.Result == nil) == (m.Error == nil) {
				t.Fatalf("an answer with both or neither result and error: %q", l)
			}
			var id string
			if json.Unmarshal(m.ID, &id) == nil && probes[id] {
				answered[id]++
				if m.Error != nil {
					t.Fatalf("the test's request %s answered with an error: %q", id, l)
				}
				continue
			}
			others++
			if string(m.ID) != "null" {
				k, ok := jsID(m.ID)
				if !ok || sentIDs[k] == 0 {
					t.Fatalf("an answer with an id no line sent (as a JavaScript client reads ids): %q\nthe ids sent: %v", l, sentIDs)
				}
				sentIDs[k]--
			}
			if string(m.ID) == "null" && m.Error != nil {
				switch m.Error.Code {
				case codeParseError:
					nullParse++
				case codeInvalidRequest:
					nullInvalid++
				}
			}
		}
		for id := range probes {
			if answered[id] != 1 {
				t.Fatalf("the test's request %s answered %d times:\n%s", id, answered[id], out)
			}
		}
		if nullParse != notJSON || nullInvalid < notObject || others > given {
			t.Fatalf("%d parse errors for %d lines not JSON, %d invalid requests for %d not objects, %d other answers for %d lines:\n%s",
				nullParse, notJSON, nullInvalid, notObject, others, given, out)
		}
	})
}

// idsOf counts the ids the lines carry (jsID), those of the JSON objects.
func idsOf(lines [][]byte) map[string]int {
	ids := map[string]int{}
	for _, l := range lines {
		var fields map[string]json.RawMessage
		if json.Unmarshal(bytes.Trim(l, " \t\r\n"), &fields) == nil {
			if k, ok := jsID(fields["id"]); ok {
				ids[k]++
			}
		}
	}
	return ids
}

// jsID is an id (its JSON text) as a JavaScript client tells ids apart: a
// string by its UTF-16 code units (a lone surrogate kept), an integer
// written in digits by its value, any other number by its text; false for
// what is no string or number, or a string that is not UTF-8.
func jsID(raw json.RawMessage) (string, bool) {
	switch {
	case len(raw) == 0:
		return "", false
	case raw[0] == '"':
		units, ok := utf16Units(raw[1 : len(raw)-1])
		return fmt.Sprintf("string %x", units), ok
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		if n, ok := new(big.Int).SetString(string(raw), 10); ok {
			return "integer " + n.String(), true
		}
		return "number " + string(raw), true
	}
	return "", false
}

// jsonEscapes are JSON's escapes of one character, but \u.
var jsonEscapes = map[byte]uint16{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// utf16Units decodes the inside of a JSON string (valid JSON) to UTF-16
// code units, as JavaScript's JSON.parse does: \ud800 alone stays a unit.
func utf16Units(s []byte) ([]uint16, bool) {
	var units []uint16
	for len(s) > 0 {
		if s[0] == '\\' {
			switch c := s[1]; c {
			case 'u':
				n, _ := strconv.ParseUint(string(s[2:6]), 16, 16)
				units = append(units, uint16(n))
				s = s[6:]
			default:
				units = append(units, jsonEscapes[c])
				s = s[2:]
			}
			continue
		}
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size <= 1 {
			return nil, false
		}
		units = append(units, utf16.Encode([]rune{r})...)
		s = s[size:]
	}
	return units, true
}

const initLineForFuzz = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// serveFuzz runs Serve on in, with commands that print a small document at
// once, and returns what it wrote; Serve must return nil within a minute.
func serveFuzz(t *testing.T, in io.Reader) []byte {
	var out bytes.Buffer
	o := Options{StopGrace: 10 * time.Second, Run: func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, _ Events) int {
		io.WriteString(stdout, `{"source":"local","tasks":[],"total":0}`)
		return 0
	}}
	lout := &lockedOutput{w: &out}
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), o, in, lout) }()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Serve did not return at the end of its input")
	}
	lout.mu.Lock()
	defer lout.mu.Unlock()
	return bytes.Clone(out.Bytes())
}
