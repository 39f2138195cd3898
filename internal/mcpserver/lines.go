package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// The SDK's stdio transport reads its input with one json.Decoder and ends
// the connection on the first message it cannot read: a line that is not
// JSON, `[]`, `{"jsonrpc":"2.0"}`, a version other than 2.0, an id that is
// an object. The server then exited, and every call in flight lost its
// answer. So the server reads its input itself, a line at a time (the MCP
// stdio transport's framing: one message a line, no newline inside), and
// hands the SDK only the lines it can read; the others are answered here
// with a JSON-RPC error and the server goes on:
//
//   - not JSON: -32700 (parse error), id null;
//   - JSON but not a request, a notification or a response: -32600
//     (invalid request), with the message's id when it is a string or a
//     number, else null; a batch (an array) is one too (see below);
//   - an invalid response (no method, a result or an error, no usable id):
//     dropped, never answered (JSON-RPC answers requests only; answering a
//     peer's bad answer could ping-pong);
//   - a line over maxLineBytes: -32600, id null, read no further than the
//     bound;
//   - a blank line: skipped.
//
// Batches are refused: MCP removed JSON-RPC batching in 2025-06-18 (the
// SDK refuses a batch itself from that version on, by ending the
// connection), no assistant this server is for sends one, and the SDK
// ends the connection on one bad element of a batch.

// maxLineBytes bounds one message, as the SDK bounds it.
const maxLineBytes = mcp.DefaultMaxLineLength

// JSON-RPC error codes of the answers written here.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
)

// lockedOutput is the server's output, written by the SDK (a message in
// one Write) and by the line reader (its error answers), never both at
// once.
type lockedOutput struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *lockedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.w.Write(p)
}

func (o *lockedOutput) Close() error { return nil }

// readLines reads in a line at a time and returns what the SDK is to read:
// the lines that are JSON-RPC messages, each on a line of its own. The
// others are answered on out, and noted on log. The reader ends (EOF)
// when in does; a read error of in is its error.
func readLines(in io.Reader, out io.Writer, log io.Writer) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r, maxLineBytes)
			if fwd := screen(line, tooLong, out, log); fwd != nil {
				if _, werr := pw.Write(fwd); werr != nil {
					return // the connection is closed: nothing reads any more
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// readLine reads one line, without its end, holding at most max bytes of
// it: a longer line is read to its end and dropped (tooLong).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the '\n'
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// screen judges one line: it returns what to hand the SDK (the message and
// a newline), or nil when the line is blank, or answered or dropped here.
func screen(line []byte, tooLong bool, out, log io.Writer) []byte {
	msg := bytes.Trim(line, " \t\r\n")
	var code int
	var why string
	switch {
	case tooLong:
		code, why = codeInvalidRequest, fmt.Sprintf("the message is over %d MiB", maxLineBytes>>20)
	case len(msg) == 0:
		return nil
	case !json.Valid(msg):
		code, why = codeParseError, "the line is not JSON (one JSON-RPC message a line)"
	case msg[0] == '[':
		code, why = codeInvalidRequest, "JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message a line"
		if bytes.Equal(bytes.Join(bytes.Fields(msg), nil), []byte("[]")) {
			why = "an empty batch"
		}
	default:
		why, id, response := judge(msg)
		switch {
		case why == "":
			return append(msg, '\n')
		case response:
			fmt.Fprintf(log, "a2a-courier mcp: dropped an invalid JSON-RPC response (%d bytes): %s\n", len(msg), why)
			return nil
		}
		answer(out, log, id, codeInvalidRequest, "not a JSON-RPC 2.0 request: "+why, len(msg))
		return nil
	}
	answer(out, log, nil, code, why, len(msg))
	return nil
}

// judge reads a JSON message as the SDK does, and says why it is not one
// to hand the SDK ("" when it is), with what of it the answer can say:
// its id as written (nil: null, when it has none or it cannot be said),
// and whether it is a response (no method, a result or an error: never
// answered).
//
// A message the SDK reads is refused all the same when the SDK would not
// answer it with its id: the SDK reads an id as a float64 and answers with
// an int64 (1.5 is answered 1, 99999999999999999999 -9223372036854775808),
// and a string as Go does (a lone UTF-16 surrogate, or a byte that is not
// UTF-8, becomes U+FFFD). Such a request is answered here with its id as
// it was written, which is the request's id exactly: the client can tell
// which request was refused, and no answer names an id it did not send.
func judge(msg []byte) (why string, id json.RawMessage, response bool) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err == nil && !idChanged(m) {
		return "", nil, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(msg, &fields) != nil {
		return "a JSON-RPC message is a JSON object", nil, false
	}
	method, hasMethod := fields["method"]
	_, result := fields["result"]
	_, failed := fields["error"]
	response = !hasMethod && (result || failed)
	id, why = idOf(fields["id"])
	var version string
	json.Unmarshal(fields["jsonrpc"], &version)
	switch {
	case why != "":
	case err == nil:
		return "", nil, false // the id was looked at, and is kept
	case version != "2.0":
		why = `the version must be "jsonrpc": "2.0"`
	case hasMethod && (len(method) == 0 || method[0] != '"'):
		why = "the method must be a string"
	case !hasMethod && !response:
		why = "a request needs a method"
	default:
		why = termui.Escaped(err.Error(), 200)
	}
	return why, id, response
}

// idChanged reports whether the SDK's id of a message it read may not be
// the id as written: a number (read as a float64), or a string that holds
// U+FFFD or what is not UTF-8 (what a lone surrogate or a bad byte
// becomes).
func idChanged(m jsonrpc.Message) bool {
	var id jsonrpc.ID
	switch m := m.(type) {
	case *jsonrpc.Request:
		id = m.ID
	case *jsonrpc.Response:
		id = m.ID
	}
	switch v := id.Raw().(type) {
	case int64:
		return true
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	}
	return false
}

// maxSafeInteger is the largest integer a float64 (the SDK's reading of a
// number id, and JavaScript's of any number) holds exactly, with its
// neighbours: 2^53 - 1.
const maxSafeInteger = 1<<53 - 1

// The rules an id is held to, as the answers say them.
const (
	idTypeRule    = "the id must be a string or an integer"
	idIntegerRule = "the id must be a string or an integer written in digits, from -9007199254740991 to 9007199254740991"
	idStringRule  = "the id must be a string of UTF-8 text, without a lone UTF-16 surrogate (\\ud800 alone)"
)

// idOf judges a message's id (its JSON text; nil when it has none): it
// returns what an answer may carry as the id (nil: null), and why the id
// is refused ("" when it is kept). A string or a number is answered as
// written, even when refused, but for a string that is not UTF-8 (the
// answer would not be either).
func idOf(raw json.RawMessage) (json.RawMessage, string) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, ""
	case raw[0] == '"':
		if !utf8.Valid(raw) {
			return nil, idStringRule
		}
		if loneSurrogate(raw) {
			return raw, idStringRule
		}
		return raw, ""
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return raw, idIntegerRule
		}
		return raw, ""
	}
	return nil, idTypeRule
}

// loneSurrogate reports whether a JSON string (valid JSON) escapes a UTF-16
// surrogate that is not one of a pair: \ud800 alone, or \udc00 first.
func loneSurrogate(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if s[i+1] != 'u' {
			i++
			continue
		}
		u := hex4(s[i+2 : i+6])
		switch {
		case u >= 0xdc00 && u <= 0xdfff:
			return true
		case u >= 0xd800 && u <= 0xdbff:
			if i+12 > len(s) || s[i+6] != '\\' || s[i+7] != 'u' {
				return true
			}
			if low := hex4(s[i+8 : i+12]); low < 0xdc00 || low > 0xdfff {
				return true
			}
			i += 6
		}
		i += 5
	}
	return false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// answer writes a JSON-RPC error answer, id null when id is nil, and notes
// it on log (its code and why, never the message: it may hold anything).
func answer(out, log io.Writer, id json.RawMessage, code int, why string, size int) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: why}})
	out.Write(append(b, '\n'))
	fmt.Fprintf(log, "a2a-courier mcp: answered a message of %d bytes with error %d: %s\n", size, code, why)
}
