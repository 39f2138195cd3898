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
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
		_, err := jsonrpc.DecodeMessage(msg)
		if err == nil {
			return append(msg, '\n')
		}
		id, response := probe(msg)
		if response {
			fmt.Fprintf(log, "a2a-courier mcp: dropped an invalid JSON-RPC response (%d bytes): %s\n", len(msg), quoted(err.Error(), 200))
			return nil
		}
		why := quoted(err.Error(), 200)
		if badID(msg) {
			why = "its id must be a string or a number" // not the SDK's "invalid ID type map[string]interface {}"
		}
		answer(out, log, id, codeInvalidRequest, "not a JSON-RPC 2.0 request: "+why, len(msg))
		return nil
	}
	answer(out, log, nil, code, why, len(msg))
	return nil
}

// probe reads what it can of a message the SDK cannot: its id, when it is
// a string or a number (nil: null), and whether it is a response (no
// method, a result or an error).
func probe(msg []byte) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return nil, false
	}
	_, method := m["method"]
	_, result := m["result"]
	_, failed := m["error"]
	id := m["id"]
	if len(id) == 0 || id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		id = nil
	}
	return id, !method && (result || failed)
}

// badID tells a message whose id is there but neither a string, a number
// nor null (an object, an array, a boolean).
func badID(msg []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return false
	}
	id, ok := m["id"]
	return ok && len(id) > 0 && (id[0] == '{' || id[0] == '[' || id[0] == 't' || id[0] == 'f')
}

// quoted is a text of the SDK's that may quote the message (its version
// tag, its id): what is not printable escaped, at most max runes, so that
// the server's log stays one line a message.
func quoted(s string, max int) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		if i == max {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
		} else {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
	}
	return b.String()
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
