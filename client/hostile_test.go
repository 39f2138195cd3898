package client

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/tidwall/gjson"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
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

// bomb returns a gzip member that inflates to mib MiB of zeros, about
// 1 KB per MiB (1 MB for 1000 MiB), with its true CRC and ISIZE. It is
// built from one compressed segment repeated, since compressing 1000 MiB
// takes seconds (more under the race detector).
func bomb(mib int) []byte {
	var seg [3][]byte
	var out bytes.Buffer
	fw, _ := flate.NewWriter(&out, flate.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := range seg {
		start := out.Len()
		fw.Write(zeros)
		fw.Flush() // ends on a byte: segments can be repeated
		seg[i] = bytes.Clone(out.Bytes()[start:])
	}
	if !bytes.Equal(seg[1], seg[2]) {
		panic("the deflate segments of zeros differ: bomb cannot repeat them")
	}
	b := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
	b = append(b, seg[0]...)
	for i := 1; i < mib; i++ {
		b = append(b, seg[1]...)
	}
	b = append(b, 3, 0) // an empty final block
	crc := uint32(0)
	for range mib {
		crc = crc32.Update(crc, crc32.IEEETable, zeros)
	}
	b = binary.LittleEndian.AppendUint32(b, crc)
	return binary.LittleEndian.AppendUint32(b, uint32(mib<<20))
}

// withISIZE returns gz with its trailer's length set to n.
func withISIZE(gz []byte, n uint32) []byte {
	gz = bytes.Clone(gz)
	binary.LittleEndian.PutUint32(gz[len(gz)-4:], n)
	return gz
}

var bomb1000 = sync.OnceValue(func() []byte { return bomb(1000) })

// wantTooLarge checks err is an over-the-cap answer: KindProtocol,
// ErrReplyTooLarge, Processed (the server answered), naming the cap.
func wantTooLarge(t *testing.T, err error, capText string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindProtocol {
		t.Fatalf("got %v, want a protocol error", err)
	}
	if !errors.Is(err, ErrReplyTooLarge) || !ce.Processed || !MayHaveArrived(err) {
		t.Errorf("got %v (Processed %v), want ErrReplyTooLarge, processed", err, ce.Processed)
	}
	if !strings.Contains(err.Error(), "larger than the "+capText+" cap") && !strings.Contains(err.Error(), "larger than the size cap ("+capText+")") ||
		!strings.Contains(err.Error(), "processed") {
		t.Errorf("got %q, want the %s cap and that the request was processed", err, capText)
	}
}

// budgetClient is a Kibana client with a budget of its own, so that
// parallel tests do not share one.
func budgetClient(t *testing.T, url string, b *ReadBudget, mod ...func(*KibanaConfig)) *Kibana {
	return newTestKibana(t, url, append([]func(*KibanaConfig){func(c *KibanaConfig) { c.ReadBudget = b; c.Retries = -1 }}, mod...)...)
}

// TestGzipBombConversation: 1 MB of gzip inflating to 1000 MiB, over the
// 256 MiB conversation cap. Its trailer says so: refused before anything
// is inflated or allocated.
func TestGzipBombConversation(t *testing.T) {
	t.Parallel()
	srv := serve(t, 200, bomb1000(), true)
	b := NewReadBudget(0)
	_, err := budgetClient(t, srv.URL, b).GetConversation(context.Background(), "c")
	wantTooLarge(t, err, "256 MiB")
	if b.InUse() != 0 {
		t.Errorf("%d bytes still reserved after the read", b.InUse())
	}
}

// TestLyingISIZE: trailers that do not tell the decoded length. None may
// make the reader allocate more than the cap, and an honest document with
// a trailer that cannot be trusted is still read whole.
func TestLyingISIZE(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"id":"c","rounds":[{"input":{"message":"hi"},"response":{"message":"` + strings.Repeat("ok ", 100_000) + `"}}]}`)
	var two bytes.Buffer
	for _, part := range [][]byte{doc[:len(doc)/2], doc[len(doc)/2:]} {
		two.Write(gzipped(part)) // two members of equal size: the last ISIZE is the first's too
	}
	const cap = 8 << 20
	tests := []struct {
		name string
		body []byte
		ok   bool
	}{
		{"bomb claiming 100 bytes", withISIZE(bomb1000(), 100), false},
		{"bomb claiming 0 bytes", withISIZE(bomb1000(), 0), false},
		{"bomb claiming the cap exactly", withISIZE(bomb1000(), cap), false},
		{"two members of equal size", two.Bytes(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, 200, tt.body, true)
			k := budgetClient(t, srv.URL, NewReadBudget(0), func(c *KibanaConfig) { c.MaxConversationBytes = cap })
			conv, err := k.GetConversation(context.Background(), "c")
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if conv.Size() != len(doc) {
					t.Errorf("read %d bytes, want %d", conv.Size(), len(doc))
				}
				return
			}
			wantTooLarge(t, err, "8 MiB")
		})
	}
	// A document whose trailer lies is a corrupt stream (gzip checks the
	// length with the CRC): cut off, as before, after at most the cap.
	for name, body := range map[string][]byte{
		"document claiming the cap":       withISIZE(gzipped(doc), cap),
		"document claiming one byte less": withISIZE(gzipped(doc), uint32(len(doc)-1)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, 200, body, true)
			k := budgetClient(t, srv.URL, NewReadBudget(0), func(c *KibanaConfig) { c.MaxConversationBytes = cap })
			_, err := k.GetConversation(context.Background(), "c")
			if KindOf(err) != KindConnection || !strings.Contains(err.Error(), "gzip: invalid checksum") {
				t.Fatalf("got %v, want a corrupt gzip body", err)
			}
		})
	}
	t.Run("claiming 4 GiB - 1 is refused unread", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, 200, withISIZE(gzipped(doc), 1<<32-1), true)
		_, err := budgetClient(t, srv.URL, NewReadBudget(0)).GetConversation(context.Background(), "c")
		wantTooLarge(t, err, "256 MiB")
	})
	t.Run("never allocates above the cap", func(t *testing.T) {
		t.Parallel()
		for _, body := range [][]byte{withISIZE(bomb1000(), 100), withISIZE(bomb1000(), cap), withISIZE(gzipped(doc), cap), two.Bytes()} {
			l := NewReadBudget(1 << 30).lease()
			resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, ContentLength: int64(len(body)),
				Body: io.NopCloser(bytes.NewReader(body))}
			readBody(context.Background(), resp, cap, l)
			// The compressed body and the document, or the compressed
			// body and the inflater's scratch space while counting.
			if limit := int64(len(body)) + max(cap, inflateScratch); l.peak > limit {
				t.Errorf("reserved %d bytes at most, want at most %d", l.peak, limit)
			}
		}
	})
}

// TestOversizedSendAnswer: a 36 MB answer to message/send, over the 32 MiB
// cap. The agent ran: the error says the request was processed, so that
// no caller records it as refused.
func TestOversizedSendAnswer(t *testing.T) {
	t.Parallel()
	answer := []byte(`{"jsonrpc":"2.0","id":"x","result":{"kind":"message","parts":[{"kind":"text","text":"` + strings.Repeat("a", 36<<20) + `"}]}}`)
	for _, zip := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", zip), func(t *testing.T) {
			t.Parallel()
			body := answer
			if zip {
				body = gzipped(answer)
			}
			srv := serve(t, 200, body, zip)
			_, err := budgetClient(t, srv.URL, NewReadBudget(0)).SendMessage(context.Background(), "a",
				OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c", Blocking: true})
			wantTooLarge(t, err, "32 MiB")
		})
	}
	t.Run("a stream event", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: "))
			w.Write(answer)
			w.Write([]byte("\n\n"))
		}))
		defer srv.Close()
		c, _ := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03, ReadBudget: NewReadBudget(0)})
		err := c.Stream(context.Background(), OutgoingMessage{Text: "hi", MessageID: "m"}, func(StreamEvent) bool { return true })
		wantTooLarge(t, err, "32 MiB")
	})
}

// heapInUse is the heap's in-use spans (HeapInuse), read without stopping
// the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// peakHeap runs fn, sampling the heap in use every 100 µs, and returns the
// most it grew above where it was before fn.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	base := heapInUse()
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- max(peak, heapInUse())
				return
			case <-tick.C:
				peak = max(peak, heapInUse())
			}
		}
	}()
	fn()
	close(stop)
	return max(<-done, base) - base
}

// TestConcurrentBombsStayWithinTheBudget: 100 tasks of one worker reading
// their conversations at once from a server where every conversation is a
// gzip bomb (1 MB inflating to 1000 MiB; half of them with a trailer that
// lies). Before, each read held 1000 MiB. Now the bombs are refused within
// the caps without being inflated into memory, and the compressed bodies
// in flight take turns within the 16 MiB budget: the heap grows by less
// than 64 MiB. Not parallel: the heap is the process's.
func TestConcurrentBombsStayWithinTheBudget(t *testing.T) {
	honest, lying := bomb1000(), withISIZE(bomb1000(), 1000)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := honest
		if n.Add(1)%2 == 0 {
			body = lying
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(body)
	}))
	defer srv.Close()
	b := NewReadBudget(DefaultReadBudgetBytes)
	// A lying trailer costs an inflation to the cap (CPU, no memory): the
	// cap is small here so that the race detector's run stays short.
	k := budgetClient(t, srv.URL, b, func(c *KibanaConfig) { c.MaxConversationBytes = 16 << 20 })
	const tasks = 100
	errs := make([]error, tasks)
	peak := peakHeap(func() {
		var wg sync.WaitGroup
		for i := range tasks {
			wg.Go(func() { _, errs[i] = k.GetConversation(context.Background(), "c") })
		}
		wg.Wait()
	})
	for _, err := range errs {
		wantTooLarge(t, err, "16 MiB")
	}
	t.Logf("heap peak %.1f MiB above the start for %d concurrent bomb reads", float64(peak)/(1<<20), tasks)
	if peak > 64<<20 {
		t.Errorf("the heap grew by %.1f MiB, want at most 64 MiB", float64(peak)/(1<<20))
	}
	if b.InUse() != 0 {
		t.Errorf("%d bytes still reserved", b.InUse())
	}
}

// oversizedKibana answers message/send with a JSON-RPC reply of sendBytes
// and the conversation with its one round, padded to convBytes.
func oversizedKibana(t *testing.T, sendBytes, convBytes int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var posts atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/agent_builder/a2a/{agent}", func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"result":{"kind":"message","parts":[{"kind":"text","text":"%s"}]}}`, strings.Repeat("a", sendBytes))
	})
	mux.HandleFunc("GET /api/agent_builder/conversations/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"id":%q,"rounds":[{"id":"r1","status":"completed","input":{"message":"hi"},"steps":[{"type":"tool_call","results":"%s"}],"response":{"message":"the reply"}}]}`,
			r.PathValue("id"), strings.Repeat("x", convBytes))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &posts
}

// TestDeliverOversizedAnswer: a send whose 200 answer is over the cap ran.
// Deliver reads the reply from the conversation (its cap is higher), and
// when that is over its cap too, ends failed saying so: never rejected
// (nothing ran), never completed with an empty reply, never sent twice.
func TestDeliverOversizedAnswer(t *testing.T) {
	t.Parallel()
	caps := func(c *KibanaConfig) { c.MaxResponseBytes = 1 << 20; c.MaxConversationBytes = 4 << 20 }
	t.Run("the conversation has the reply", func(t *testing.T) {
		t.Parallel()
		srv, posts := oversizedKibana(t, 2<<20, 2<<20)
		var log eventLog
		o := deliverOpts("a", "ctx-big", "hi")
		o.OnEvent = log.add
		// No poll before the answer: the conversation (which has the round
		// from the start) is read because the answer was over the cap, not
		// because a poll came first under load.
		o.PollInterval = time.Minute
		out := budgetClient(t, srv.URL, NewReadBudget(0), caps).Deliver(context.Background(), o)
		if out.State != StateCompleted || out.Reply != "the reply" || out.Via != "conversation" {
			t.Fatalf("got %+v, want the reply read from the conversation", out)
		}
		if !log.has("reply_too_large") || posts.Load() != 1 {
			t.Errorf("events %v, %d sends", log.kinds, posts.Load())
		}
	})
	t.Run("the conversation is over its cap too", func(t *testing.T) {
		t.Parallel()
		srv, posts := oversizedKibana(t, 2<<20, 5<<20)
		out := budgetClient(t, srv.URL, NewReadBudget(0), caps).Deliver(context.Background(), deliverOpts("a", "ctx-huge", "hi"))
		if out.Final() || out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) {
			t.Fatalf("got %+v, want no outcome (lost) with ErrReplyTooLarge", out)
		}
		if want := "the run finished, but its reply cannot be kept: the answer is larger than the 1 MiB cap and the conversation larger than the 4 MiB cap"; !strings.HasPrefix(out.Err.Error(), want) {
			t.Errorf("error %q, want it to start %q", out.Err, want)
		}
		if posts.Load() != 1 {
			t.Errorf("%d sends, want 1", posts.Load())
		}
	})
	t.Run("a generic agent without a task list", func(t *testing.T) {
		t.Parallel()
		var posts atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			posts.Add(1)
			io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"result":{"kind":"message","parts":[{"kind":"text","text":"%s"}]}}`, strings.Repeat("a", 2<<20))
		}))
		defer srv.Close()
		c, _ := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03, MaxResponseBytes: 1 << 20, ReadBudget: NewReadBudget(0)})
		out := c.Deliver(context.Background(), A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c"}, Send: true, PollInterval: 10 * time.Millisecond})
		// Lost, not failed: the run answered, nothing says it failed, and
		// no task holds the answer.
		if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || !errors.Is(out.Err, ErrNoTask) ||
			out.Err.Error() != "the agent answered, but its answer is larger than the 1 MiB cap and no task to read it from can be found (the agent cannot list tasks by context)" {
			t.Fatalf("got %+v, want no outcome: the answer is lost", out)
		}
		if posts.Load() != 1 {
			t.Errorf("%d requests, want the one send", posts.Load())
		}
	})
}

// TestStreamEventOverTheCap: a generic agent's stream event over the size
// cap is not a broken connection: reply_too_large is emitted, the task is
// read instead of streamed again, and when the task itself is over the cap
// the delivery ends without an outcome and with ErrReplyTooLarge (the
// runner ends it expired and lost), never failed, never sent twice.
func TestStreamEventOverTheCap(t *testing.T) {
	t.Parallel()
	for _, taskFits := range []bool{false, true} {
		t.Run(fmt.Sprintf("the task read fits: %v", taskFits), func(t *testing.T) {
			t.Parallel()
			big := strings.Repeat("a", 2<<20)
			var sends, subscribes, gets atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				method := gjson.GetBytes(body, "method").String()
				switch method {
				case "message/stream", "tasks/resubscribe":
					if method == "tasks/resubscribe" {
						subscribes.Add(1)
					} else {
						sends.Add(1)
					}
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, `data: {"jsonrpc":"2.0","id":null,"result":{"kind":"task","id":"t1","contextId":"c","status":{"state":"working"}}}`+"\n\n")
					fmt.Fprintf(w, `data: {"jsonrpc":"2.0","id":null,"result":{"kind":"artifact-update","taskId":"t1","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"%s"}]}}}`+"\n\n", big)
				case "tasks/get":
					gets.Add(1)
					text := big
					if taskFits {
						text = "the whole answer, read from the task"
					}
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"result":{"kind":"task","id":"t1","contextId":"c","status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[{"kind":"text","text":"%s"}]}]}}`, text)
				default:
					http.Error(w, method, http.StatusBadRequest)
				}
			}))
			defer srv.Close()
			c, _ := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03, MaxResponseBytes: 1 << 20, ReadBudget: NewReadBudget(0)})
			var log eventLog
			out := c.Deliver(context.Background(), A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c"}, Send: true,
				Streaming: true, PollInterval: 10 * time.Millisecond, OnEvent: log.add})
			if sends.Load() != 1 || subscribes.Load() != 0 || gets.Load() != 1 {
				t.Errorf("%d sends, %d subscriptions, %d reads; want 1, 0, 1", sends.Load(), subscribes.Load(), gets.Load())
			}
			if !log.has("reply_too_large") || log.has("connection_lost") {
				t.Errorf("events %v", log.kinds)
			}
			if taskFits {
				if out.State != StateCompleted || out.Reply != "the whole answer, read from the task" {
					t.Fatalf("got %+v", out)
				}
				return
			}
			if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || out.TaskID != "" {
				t.Fatalf("got %+v, want no outcome and ErrReplyTooLarge", out)
			}
		})
	}
}

// TestStreamBuffersAreBudgeted: a stream's large event is counted in the
// read budget while it is gathered, and given back once it is passed on,
// so that streams idle between events hold nothing of it.
func TestStreamBuffersAreBudgeted(t *testing.T) {
	t.Parallel()
	big := `{"jsonrpc":"2.0","id":null,"result":{"kind":"status-update","taskId":"t","status":{"state":"working","message":{"parts":[{"kind":"text","text":"` + strings.Repeat("a", 4<<20) + `"}]}}}}`
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", big)
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, `data: {"jsonrpc":"2.0","id":null,"result":{"kind":"status-update","taskId":"t","final":true,"status":{"state":"completed"}}}`+"\n\n")
	}))
	defer srv.Close()
	defer close(release)
	b := NewReadBudget(0)
	c, _ := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03, ReadBudget: b})
	var inUse []int64
	err := c.Stream(context.Background(), OutgoingMessage{Text: "hi", MessageID: "m"}, func(ev StreamEvent) bool {
		inUse = append(inUse, b.InUse())
		if len(inUse) == 1 {
			go func() {
				// Between the events: the large one's bytes are given back.
				for b.InUse() != 0 {
					time.Sleep(time.Millisecond)
				}
				release <- struct{}{}
			}()
		}
		return !ev.Final
	})
	if err != nil || len(inUse) != 2 {
		t.Fatalf("got %v after %d events", err, len(inUse))
	}
	if inUse[0] < 4<<20 {
		t.Errorf("the 4 MiB event was read with %d bytes reserved", inUse[0])
	}
}

// TestKibanaOversizedAnswerAfterAStreamFallback: a stream asked of a
// Kibana 9.6 agent whose card does not stream (as no released card does)
// goes once by message/send, and that answer, larger than the answer cap,
// is not an answer and not a failure: the reply is read from the
// conversation, and the run happened once. (The simulator streams a reply
// in events under the cap; an SSE event over it is the client's
// TestStreamEventOverTheCap.)
func TestKibanaOversizedAnswerAfterAStreamFallback(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Version = agentbuildertest.V96
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "big", Name: "Big", RunTime: 20 * time.Millisecond, ReplyBytes: 300 << 10})
	})
	k := newTestKibana(t, sim.URL, func(c *KibanaConfig) { c.APIKey = testKey; c.MaxResponseBytes = 64 << 10 })
	o := deliverOpts("big", "c-stream-huge", "everything")
	o.Stream = true
	// No poll before the answer: the conversation is read because the
	// answer was over the cap, not because a 50 ms poll came first.
	o.PollInterval = time.Minute
	log := &eventLog{}
	o.OnEvent = log.add
	out := k.Deliver(context.Background(), o)
	if out.State != StateCompleted || len(out.Reply) < 300<<10 || out.Via != "conversation" {
		t.Fatalf("state %s via %s, %d bytes of reply, err %v", out.State, out.Via, len(out.Reply), out.Err)
	}
	if !log.has("stream_unsupported") || !log.has("reply_too_large") || sim.Runs("c-stream-huge") != 1 {
		t.Errorf("events %v, %d runs", log.kinds, sim.Runs("c-stream-huge"))
	}
}
