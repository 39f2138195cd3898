package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// sseEvent is one dispatched event: its type ("" for the default) and data.
type sseEvent struct{ event, data string }

// refSSE is the reference reader: the WHATWG event-stream rules written as
// plainly as possible over the whole input, plus readSSE's two caps. It
// returns the events dispatched, in order, and whether a cap stopped it.
//
// The rules: a leading BOM is skipped; a line ends in LF, CRLF or a lone
// CR; an empty line dispatches the event when data lines were seen; a
// line starting with ':' is a comment; "field: value" loses one space
// after the colon; a line without a colon is a field with an empty value;
// data lines join with LF; only the event and data fields matter here. An
// event not closed by an empty line when the input ends is dropped, and so
// is an unterminated last line.
func refSSE(in []byte, max int) (events []sseEvent, capped bool) {
	s := string(bytes.TrimPrefix(in, []byte("\xEF\xBB\xBF")))
	var event, data string
	hasData := false
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			// The unterminated last line: dropped, unless it is too long
			// already.
			return events, len(s) > max+sseLineSlack
		}
		line := s[:i]
		if len(line) > max+sseLineSlack {
			return events, true
		}
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
		switch {
		case line == "":
			if hasData {
				events = append(events, sseEvent{event, data})
			}
			event, data, hasData = "", "", false
		case line[0] == ':':
		default:
			field, value := line, ""
			if j := strings.IndexByte(line, ':'); j >= 0 {
				field, value = line[:j], line[j+1:]
				if strings.HasPrefix(value, " ") {
					value = value[1:]
				}
			}
			switch field {
			case "event":
				event = value
			case "data":
				if hasData {
					data += "\n"
				}
				data += value
				hasData = true
				if len(data) > max {
					return events, true
				}
			}
		}
	}
}

// chunkReader hands the input out in pieces of the sizes it is given, so
// that lines, CRLF pairs and the BOM straddle reads.
type chunkReader struct {
	data  []byte
	sizes []byte
	n     int
	err   error // returned at the end instead of io.EOF
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	size := len(p)
	if len(r.sizes) > 0 {
		size = int(r.sizes[r.n%len(r.sizes)]) + 1
		r.n++
	}
	size = min(size, len(p), len(r.data))
	copy(p, r.data[:size])
	r.data = r.data[size:]
	return size, nil
}

var errFuzzStop = errors.New("the callback failed")

// FuzzReadSSE feeds arbitrary bytes to readSSE, in arbitrary read sizes,
// and checks it against refSSE:
//
//   - it never panics and always returns (the input is finite);
//   - the events it dispatches are exactly the reference's, type and data,
//     in order, with data lines joined by LF;
//   - comments, unknown fields, id: and retry: lines change nothing;
//   - no event's data and no line exceeds the cap: the cap gives a
//     KindProtocol *Error after the events before it;
//   - the end of the input gives errStreamCut (an event still open is
//     dropped), a broken read a KindConnection *Error, a callback's false
//     nil, and a callback's error that error, each at the right event.
func FuzzReadSSE(f *testing.F) {
	seeds := []string{
		// a2a-go: id + data, no event field.
		"id: 019a0f4e-1c2b-7d3e-8f90-0123456789ab\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"working\"},\"final\":false}}\n\n",
		// a2a-js v1.0: data only.
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\n\n",
		// a2a-js v0.3 resubscribe error: event: error.
		"event: error\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32001,\"message\":\"Task not found: t\"}}\n\n",
		// The simulator: keep-alive comments and CRLF.
		": keep-alive\r\n\r\nid: 1764500000000\r\ndata: {\"a\":1}\r\n\r\n",
		// Multi-line data, a field without a colon, no space after the colon.
		"data:first\ndata\ndata:  two spaces\n\n",
		// Lone CRs, a BOM, an event left open at the end.
		"\xEF\xBB\xBFdata: a\r\rdata: b\revent: x\rdata: c",
		// Unknown fields and retry.
		"retry: 1000\nfoo: bar\nid\nevent: ping\n\ndata: after\n\n",
		"",
		"\n\n\n",
		"data: " + strings.Repeat("x", 300) + "\n\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint16(256), []byte{}, uint8(255), false)
		f.Add([]byte(s), uint16(16), []byte{0, 2, 7}, uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, max16 uint16, sizes []byte, stopAt uint8, broken bool) {
		max := int(max16%4096) + 1
		want, capped := refSSE(in, max)

		r := &chunkReader{data: bytes.Clone(in), sizes: sizes}
		if broken {
			r.err = errors.New("connection reset by peer")
		}
		var src io.Reader = r
		if len(sizes) > 0 && sizes[0]%5 == 0 {
			src = iotest.OneByteReader(r)
		}
		// stopAt < 128: the callback says stop at that event; stopAt
		// >= 128: it fails at event stopAt-128; 255: never.
		var got []sseEvent
		err := readSSE(src, int64(max), func(event, data string) (bool, error) {
			got = append(got, sseEvent{event, data})
			n := len(got) - 1
			switch {
			case stopAt == 255:
			case stopAt < 128 && n == int(stopAt):
				return false, nil
			case stopAt >= 128 && n == int(stopAt)-128:
				return false, errFuzzStop
			}
			return true, nil
		})

		// What the callback's answers make of the reference's events.
		wantErr := "end"
		if capped {
			wantErr = "cap"
		}
		if stopAt != 255 {
			k := int(stopAt) % 128
			if k < len(want) {
				want = want[:k+1]
				wantErr = "stop"
				if stopAt >= 128 {
					wantErr = "fail"
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d\n got %q\nwant %q", len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("event %d is %q, want %q", i, got[i], want[i])
			}
			if len(got[i].data) > max {
				t.Fatalf("event %d has %d bytes of data, over the cap %d", i, len(got[i].data), max)
			}
		}
		var ce *Error
		switch wantErr {
		case "stop":
			if err != nil {
				t.Fatalf("the callback said stop; got %v", err)
			}
		case "fail":
			if err != errFuzzStop {
				t.Fatalf("the callback failed; got %v", err)
			}
		case "cap":
			if !errors.As(err, &ce) || ce.Kind != KindProtocol || !strings.Contains(ce.Message, "size cap") {
				t.Fatalf("over the cap: got %v, want the size cap error", err)
			}
		case "end":
			switch {
			case broken:
				if !errors.As(err, &ce) || ce.Kind != KindConnection {
					t.Fatalf("a broken read: got %v, want KindConnection", err)
				}
			case err != errStreamCut:
				t.Fatalf("the end of the input: got %v, want errStreamCut", err)
			}
		}
		if ce != nil {
			if msg := ce.Error(); strings.ContainsAny(msg, "\r\n") || len(msg) > 400 {
				t.Fatalf("error text is not one short line: %q", msg)
			}
		}
	})
}
