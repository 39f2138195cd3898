package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Hostile servers: answers built to crash the client or to exhaust its
// memory (nesting bombs, decompression bombs, lying gzip trailers, answers
// over the cap). Each case is a real HTTP exchange on loopback and checks
// the documented outcome: the error's kind, its message, Processed.

// deep returns n nested arrays: "[[[…]]]".
func deep(n int) []byte {
	b := make([]byte, 2*n)
	for i := range n {
		b[i], b[2*n-1-i] = '[', ']'
	}
	return b
}

// gzipped compresses b into one gzip member.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// serve answers every request with status and body, gzip-encoded when zip
// is set (the body is then sent compressed as given).
func serve(t *testing.T, status int, body []byte, zip bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if zip {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// wantNesting checks err is the nesting error: KindProtocol, one line
// naming the bound, ErrNestedTooDeep, Processed as given.
func wantNesting(t *testing.T, err error, processed bool) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindProtocol {
		t.Fatalf("got %v, want a protocol error", err)
	}
	if !errors.Is(err, ErrNestedTooDeep) || !strings.Contains(err.Error(), fmt.Sprintf("nests deeper than %d levels", MaxNesting)) {
		t.Errorf("got %q, want the nesting error", err)
	}
	if ce.Processed != processed || MayHaveArrived(err) != processed {
		t.Errorf("Processed %v, MayHaveArrived %v, want %v", ce.Processed, MayHaveArrived(err), processed)
	}
	if strings.ContainsAny(err.Error(), "\r\n") || len(err.Error()) > 300 {
		t.Errorf("not one short line: %q", err)
	}
}

// TestNestingBombInASendAnswer is the case that ended the process: 10
// million nested arrays (20 MB, a gzip body of about 20 KB, under the 32
// MiB cap) as the answer to message/send. gjson.Valid recursed once per
// level and overflowed the stack.
func TestNestingBombInASendAnswer(t *testing.T) {
	t.Parallel()
	body := append([]byte(`{"jsonrpc":"2.0","id":"x","result":`), deep(10_000_000)...)
	body = append(body, '}')
	srv := serve(t, 200, gzipped(body), true)
	k := newTestKibana(t, srv.URL)
	_, err := k.SendMessage(context.Background(), "a", OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c", Blocking: true})
	wantNesting(t, err, true)
}

func TestNestingBombInAConversation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		doc  []byte
	}{
		// Validated as a whole (under the 8 MiB quick-check size).
		{"small, with an id", append(append([]byte(`{"id":"c","rounds":[`), deep(MaxNesting+1)...), "]}"...)},
		// Over 8 MiB, gzip (framing proves it complete): not validated as
		// a whole, then, having no id, checked before it is described.
		{"20 MB, no id", append(append([]byte(`{"x":`), deep(10_000_000)...), '}')},
		{"20 MB, bare arrays", deep(10_000_000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, 200, gzipped(tt.doc), true)
			_, err := newTestKibana(t, srv.URL).GetConversation(context.Background(), "c")
			wantNesting(t, err, true)
		})
	}
	t.Run("20 MB with an id is read, without recursion", func(t *testing.T) {
		t.Parallel()
		// The round scanner and gjson.Get walk nested values iteratively:
		// such a document is read as the conversation it claims to be.
		doc := append(append([]byte(`{"id":"c","rounds":[`), deep(10_000_000)...), "]}"...)
		srv := serve(t, 200, gzipped(doc), true)
		conv, err := newTestKibana(t, srv.URL).GetConversation(context.Background(), "c")
		if err != nil {
			t.Fatal(err)
		}
		if r, n, ok := conv.PickRound(-1); !ok || n != 1 || r.Response != "" {
			t.Errorf("PickRound: %+v %d %v", r, n, ok)
		}
	})
	t.Run("exactly MaxNesting levels is read", func(t *testing.T) {
		t.Parallel()
		doc := append(append([]byte(`{"id":"c","x":`), deep(MaxNesting-1)...), '}')
		srv := serve(t, 200, doc, false)
		if _, err := newTestKibana(t, srv.URL).GetConversation(context.Background(), "c"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNestingBombInAStreamEvent(t *testing.T) {
	t.Parallel()
	event := append([]byte(`data: {"jsonrpc":"2.0","id":"x","result":`), deep(5_000_000)...)
	event = append(event, "}\n\n"...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"result\":{\"kind\":\"status-update\",\"taskId\":\"t\",\"status\":{\"state\":\"working\"}}}\n\n"))
		w.Write(event)
	}))
	defer srv.Close()
	c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03})
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	err = c.Stream(context.Background(), OutgoingMessage{Text: "hi", MessageID: "m"}, func(StreamEvent) bool { events++; return true })
	wantNesting(t, err, true)
	if !strings.Contains(err.Error(), "a stream event nests deeper") || events != 1 {
		t.Errorf("got %q after %d events", err, events)
	}
}

func TestNestingBombInAnErrorBody(t *testing.T) {
	t.Parallel()
	// classifyStatus reads 64 KiB of an error body and parses it when it
	// is JSON: 32768 levels.
	srv := serve(t, 400, deep(64<<10/2), false)
	_, err := newTestKibana(t, srv.URL).ListAgents(context.Background())
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindBadRequest || ce.StatusCode != 400 {
		t.Fatalf("got %v, want the 400's bad request", err)
	}
	if want := fmt.Sprintf("Bad Request (an error body nesting deeper than %d levels, not read)", MaxNesting); ce.Message != want {
		t.Errorf("message %q, want %q", ce.Message, want)
	}
}

func TestNestsTooDeep(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{string(deep(MaxNesting)), false},
		{string(deep(MaxNesting + 1)), true},
		{strings.Repeat(`{"a":`, MaxNesting) + "1" + strings.Repeat("}", MaxNesting), false},
		{strings.Repeat(`{"a":`, MaxNesting+1) + "1" + strings.Repeat("}", MaxNesting+1), true},
		// Brackets in strings, escaped quotes included, do not count.
		{`["` + strings.Repeat("[", 5000) + `\"` + strings.Repeat("{", 5000) + `"]`, false},
		{`["\\"` + strings.Repeat(",[", MaxNesting) + strings.Repeat("]", MaxNesting) + "]", true},
		// Closing brackets first do not buy depth for later ones.
		{strings.Repeat("]", 5000) + string(deep(MaxNesting+1)), true},
		{`"` + strings.Repeat("[", 5000), false}, // an unterminated string
	} {
		if got := nestsTooDeep(tt.in); got != tt.want {
			t.Errorf("nestsTooDeep(%.40q…) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
