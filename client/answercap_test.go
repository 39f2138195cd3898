package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// Hostile generic agents, on loopback: answers that add up past the
// answer cap over many events, answers of too many parts, part metadata
// of megabytes, listings that ignore their page size, and answers that
// name another context.

// scripted is a generic A2A 0.3 JSON-RPC agent whose answers the test
// writes: stream answers message/stream and tasks/resubscribe (as SSE),
// send message/send, get tasks/get. ctx is the contextId the message named.
type scripted struct {
	srv                       *httptest.Server
	stream                    func(w io.Writer, id, ctx string)
	send, get                 func(w io.Writer, id, ctx string)
	streams, sends, gets, any atomic.Int32
	// max is the answer cap (0: 1 MiB).
	max int64
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	s := &scripted{}
	var last atomic.Value
	last.Store("")
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		if c := gjson.GetBytes(body, "params.message.contextId").String(); c != "" {
			last.Store(c)
		}
		ctx := last.Load().(string)
		s.any.Add(1)
		switch m := gjson.GetBytes(body, "method").String(); {
		case (m == "message/stream" || m == "tasks/resubscribe") && s.stream != nil:
			s.streams.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			s.stream(w, id, ctx)
		case m == "message/send" && s.send != nil:
			s.sends.Add(1)
			s.send(w, id, ctx)
		case m == "tasks/get" && s.get != nil:
			s.gets.Add(1)
			s.get(w, id, ctx)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// deliver sends one message (by stream when streaming) to the agent, with
// an answer cap of s.max.
func (s *scripted) deliver(t *testing.T, streaming bool) (Outcome, *eventLog) {
	t.Helper()
	c, err := NewA2A(A2AConfig{Endpoint: s.srv.URL, Dialect: V03, MaxResponseBytes: cmp.Or(s.max, 1<<20), ReadBudget: NewReadBudget(0)})
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := c.Deliver(ctx, A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m-1", ContextID: "ctx-1"}, Send: true,
		Streaming: streaming, PollInterval: 10 * time.Millisecond, OnEvent: log.add})
	if ctx.Err() != nil {
		t.Fatalf("the delivery did not end: %+v", out)
	}
	return out, log
}

func sse(w io.Writer, id, result string) {
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, result)
}

func rpcOK(w io.Writer, id, result string) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// chunk is an artifact-update event of artifact art with parts.
func chunk(ctx, art string, appendTo bool, parts string) string {
	return fmt.Sprintf(`{"kind":"artifact-update","taskId":"t-1","contextId":%q,"append":%v,"artifact":{"artifactId":%q,"parts":[%s]}}`, ctx, appendTo, art, parts)
}

func textPart(s string) string { return fmt.Sprintf(`{"kind":"text","text":%q}`, s) }

func taskJSON(ctx, state, artifacts, status string) string {
	msg := ""
	if status != "" {
		msg = `,"message":{"kind":"message","role":"agent","messageId":"s","parts":[` + textPart(status) + `]}`
	}
	arts := ""
	if artifacts != "" {
		arts = `,"artifacts":[` + artifacts + `]`
	}
	return fmt.Sprintf(`{"kind":"task","id":"t-1","contextId":%q,"status":{"state":%q%s}%s}`, ctx, state, msg, arts)
}

// TestStreamedChunksAddUpToTheCap: the answer cap holds for the whole
// answer of a stream, not per event: chunks of 64 KiB, each far under the
// 1 MiB cap, that add up past it (with the final status message, or in
// parts, or in artifacts) stop the stream, are dropped, and the task is
// read instead. A task that holds the answer within the cap gives it; one
// that holds no artifacts cannot (its answer was the chunks): no outcome,
// ErrReplyTooLarge, which the runner ends expired and lost, never
// completed with what was kept.
func TestStreamedChunksAddUpToTheCap(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("a", 64<<10)
	for _, tc := range []struct {
		name   string
		events func(w io.Writer, id, ctx string)
		// whole is the task tasks/get shows holding the whole answer
		// ("" : the task keeps no artifacts).
		whole string
	}{
		{"40 chunks of 64 KiB, appended", func(w io.Writer, id, ctx string) {
			for i := range 40 {
				sse(w, id, chunk(ctx, "a", i > 0, textPart(piece)))
			}
		}, ""},
		{"40 chunks of 64 KiB, the task holds the answer", func(w io.Writer, id, ctx string) {
			for i := range 40 {
				sse(w, id, chunk(ctx, "a", i > 0, textPart(piece)))
			}
		}, "the whole answer, from the task"},
		{"40 artifacts of 64 KiB", func(w io.Writer, id, ctx string) {
			for i := range 40 {
				sse(w, id, chunk(ctx, fmt.Sprint("a", i), false, textPart(piece)))
			}
		}, ""},
		{"1001 parts of one byte", func(w io.Writer, id, ctx string) {
			for i := range 1001 {
				sse(w, id, chunk(ctx, "a", i > 0, textPart("x")))
			}
		}, ""},
		{"1001 artifacts with no parts", func(w io.Writer, id, ctx string) {
			for i := range 1001 {
				sse(w, id, chunk(ctx, fmt.Sprint("a", i), false, ""))
			}
		}, ""},
		{"the final status message passes the cap", func(w io.Writer, id, ctx string) {
			for i := range 12 {
				sse(w, id, chunk(ctx, "a", i > 0, textPart(piece)))
			}
			sse(w, id, fmt.Sprintf(`{"kind":"status-update","taskId":"t-1","contextId":%q,"final":true,"status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"s","parts":[%s]}}}`,
				ctx, textPart(strings.Repeat("b", 300<<10))))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScripted(t)
			s.stream = func(w io.Writer, id, ctx string) {
				sse(w, id, taskJSON(ctx, "working", "", ""))
				tc.events(w, id, ctx)
				sse(w, id, fmt.Sprintf(`{"kind":"status-update","taskId":"t-1","contextId":%q,"final":true,"status":{"state":"completed"}}`, ctx))
			}
			s.get = func(w io.Writer, id, ctx string) {
				arts := ""
				if tc.whole != "" {
					arts = `{"artifactId":"a","parts":[` + textPart(tc.whole) + `]}`
				}
				rpcOK(w, id, taskJSON(ctx, "completed", arts, ""))
			}
			out, log := s.deliver(t, true)
			if s.streams.Load() != 1 || s.gets.Load() != 1 || s.sends.Load() != 0 {
				t.Errorf("%d streams, %d reads, %d sends; want 1, 1, 0 (the task is read, never streamed or sent again)", s.streams.Load(), s.gets.Load(), s.sends.Load())
			}
			if !log.has("reply_too_large") {
				t.Errorf("events %v", log.kinds)
			}
			if tc.whole != "" {
				if out.State != StateCompleted || out.Reply != tc.whole {
					t.Fatalf("got state %q, %d bytes of reply, err %v; want the task's answer", out.State, len(out.Reply), out.Err)
				}
				return
			}
			if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || !MayHaveArrived(out.Err) || len(out.Reply) != 0 {
				t.Fatalf("got state %q, %d bytes of reply, err %v; want no outcome and ErrReplyTooLarge", out.State, len(out.Reply), out.Err)
			}
		})
	}
}

// TestStreamedAnswerOverTheCapWithNoTaskRead: a stream whose chunks add
// up past the cap, from an agent that has no tasks/get (-32601): the
// answer came and was dropped, and no read can bring it: the delivery
// ends at once with ErrReplyTooLarge (the runner's "lost", never
// completed), after one read. It used to read the task again and again,
// as if the agent were still at work, for the caller's whole wait (send:
// "still running … Nothing is lost", then a worker for 2 h).
func TestStreamedAnswerOverTheCapWithNoTaskRead(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("a", 64<<10)
	s := newScripted(t)
	s.stream = func(w io.Writer, id, ctx string) {
		sse(w, id, taskJSON(ctx, "working", "", ""))
		for i := range 40 {
			sse(w, id, chunk(ctx, "a", i > 0, textPart(piece)))
		}
		sse(w, id, fmt.Sprintf(`{"kind":"status-update","taskId":"t-1","contextId":%q,"final":true,"status":{"state":"completed"}}`, ctx))
	}
	s.get = func(w io.Writer, id, ctx string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
	}
	out, log := s.deliver(t, true)
	if s.streams.Load() != 1 || s.gets.Load() != 1 || s.sends.Load() != 0 {
		t.Errorf("%d streams, %d reads, %d sends; want 1, 1, 0", s.streams.Load(), s.gets.Load(), s.sends.Load())
	}
	if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || len(out.Reply) != 0 || !log.has("reply_too_large") {
		t.Fatalf("got state %q, %d bytes of reply, err %v, events %v; want no outcome and ErrReplyTooLarge", out.State, len(out.Reply), out.Err, log.kinds)
	}
}

// TestAnswerOfTooManyParts: a message or a task read whole of more than
// MaxReplyParts parts is over the answer cap, however small: a Message
// answer no task holds is lost (A2A 0.3 lists no tasks), a task read so is
// unreadable (ErrReplyTooLarge), neither completed.
func TestAnswerOfTooManyParts(t *testing.T) {
	t.Parallel()
	parts := func(n int) string {
		list := make([]string, n)
		for i := range list {
			list[i] = fmt.Sprintf(`{"kind":"file","file":{"name":"f%d.txt","bytes":"aGk="}}`, i)
		}
		return strings.Join(list, ",")
	}
	t.Run("a message", func(t *testing.T) {
		t.Parallel()
		s := newScripted(t)
		s.send = func(w io.Writer, id, ctx string) {
			rpcOK(w, id, fmt.Sprintf(`{"kind":"message","role":"agent","messageId":"r","contextId":%q,"parts":[%s]}`, ctx, parts(MaxReplyParts+1)))
		}
		out, _ := s.deliver(t, false)
		if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || !errors.Is(out.Err, ErrNoTask) || s.sends.Load() != 1 ||
			!strings.Contains(out.Err.Error(), "more than the 1000 parts") {
			t.Fatalf("got %q %d parts, %v; want no outcome: the answer is lost", out.State, len(out.Parts), out.Err)
		}
	})
	t.Run("a task read", func(t *testing.T) {
		t.Parallel()
		s := newScripted(t)
		s.send = func(w io.Writer, id, ctx string) { rpcOK(w, id, taskJSON(ctx, "working", "", "")) }
		s.get = func(w io.Writer, id, ctx string) {
			rpcOK(w, id, taskJSON(ctx, "completed", `{"artifactId":"a","parts":[`+parts(MaxReplyParts+1)+`]}`, ""))
		}
		out, log := s.deliver(t, false)
		if out.State != "" || !errors.Is(out.Err, ErrReplyTooLarge) || s.gets.Load() != 1 || !log.has("reply_too_large") {
			t.Fatalf("got %q %d parts, %v after %d reads", out.State, len(out.Parts), out.Err, s.gets.Load())
		}
	})
	t.Run("1000 parts are an answer", func(t *testing.T) {
		t.Parallel()
		s := newScripted(t)
		s.send = func(w io.Writer, id, ctx string) {
			rpcOK(w, id, fmt.Sprintf(`{"kind":"message","role":"agent","messageId":"r","contextId":%q,"parts":[%s]}`, ctx, parts(MaxReplyParts)))
		}
		if out, _ := s.deliver(t, false); out.State != StateCompleted || len(out.Parts) != MaxReplyParts {
			t.Fatalf("got %q, %d parts, %v", out.State, len(out.Parts), out.Err)
		}
	})
}

// TestPartMetadataIsBounded: what a part says of itself is bounded as it
// is read: a name of a megabyte is cut to 255 bytes at a UTF-8 boundary,
// ending "…"; a media type that is not one, or too long, is dropped (one
// with parameters is kept); a URL over 8 KiB is dropped, Problem saying
// so; an artifact's name is cut, and its id, compared only, is named by
// its digest.
func TestPartMetadataIsBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<é", 512<<10) // 1.5 MiB, two-byte runes among one-byte ones
	s := newScripted(t)
	s.max = 16 << 20
	s.send = func(w io.Writer, id, ctx string) {
		parts := []string{
			fmt.Sprintf(`{"kind":"file","file":{"name":%q,"mimeType":%q,"bytes":"aGk="}}`, long, "text/"+strings.Repeat("x", 200)),
			fmt.Sprintf(`{"kind":"file","file":{"name":"ok.txt","mimeType":"text/plain; charset=utf-8","uri":%q}}`, "https://x.example/"+strings.Repeat("p", 9<<10)),
			`{"kind":"file","file":{"name":"b.bin","mimeType":"not a type","uri":"https://x.example/b"}}`,
		}
		art := fmt.Sprintf(`{"artifactId":%q,"name":%q,"parts":[%s]}`, strings.Repeat("i", 1<<20), long, strings.Join(parts, ","))
		rpcOK(w, id, taskJSON(ctx, "completed", art, ""))
	}
	out, _ := s.deliver(t, false)
	if out.State != StateCompleted || len(out.Parts) != 3 {
		t.Fatalf("got %q with %d parts: %v", out.State, len(out.Parts), out.Err)
	}
	p := out.Parts
	if len(p[0].Name) > MaxPartName || !strings.HasSuffix(p[0].Name, "…") || !strings.HasPrefix(long, strings.TrimSuffix(p[0].Name, "…")) || p[0].MediaType != "" {
		t.Errorf("part 1: name of %d bytes (%q…), media type %q", len(p[0].Name), p[0].Name[:min(20, len(p[0].Name))], p[0].MediaType)
	}
	if p[1].URL != "" || !strings.Contains(p[1].Problem, "URL is longer than 8 KiB") || p[1].MediaType != "text/plain; charset=utf-8" || p[1].Name != "ok.txt" {
		t.Errorf("part 2: URL of %d bytes, problem %q, media type %q", len(p[1].URL), p[1].Problem, p[1].MediaType)
	}
	if p[2].MediaType != "" || p[2].URL != "https://x.example/b" {
		t.Errorf("part 3: media type %q, URL %q", p[2].MediaType, p[2].URL)
	}
	for _, x := range p {
		if len(x.ArtifactName) > MaxPartName || !strings.HasSuffix(x.ArtifactName, "…") || len(x.ArtifactID) > MaxPartName || !strings.HasPrefix(x.ArtifactID, "sha256:") {
			t.Fatalf("artifact name of %d bytes, id of %d (%.20q)", len(x.ArtifactName), len(x.ArtifactID), x.ArtifactID)
		}
	}
}

// TestBoundName: names are cut at a rune's start, never in its middle.
func TestBoundName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"report.csv", "report.csv"},
		{strings.Repeat("a", 255), strings.Repeat("a", 255)},
		{strings.Repeat("a", 256), strings.Repeat("a", 252) + "…"},
		{"a" + strings.Repeat("é", 200), "a" + strings.Repeat("é", 125) + "…"},
	} {
		if got := BoundName(tc.in); got != tc.want || len(got) > MaxPartName {
			t.Errorf("BoundName(%d bytes) = %d bytes %q…", len(tc.in), len(got), got[:min(10, len(got))])
		}
	}
}

// TestAnswerForAnotherContext: an answer (a Message or a Task, sent,
// streamed or read) that names a contextId other than the one the message
// was sent in is not this message's reply: refused with ErrOtherContext,
// never completed. The message may have run (it is not rejected), so the
// task of this context is looked for; A2A 0.3 cannot list tasks, and the
// answer is lost. A task read that names another context ends following
// at once. An answer that names no context, or this one, is the reply.
func TestAnswerForAnotherContext(t *testing.T) {
	t.Parallel()
	message := func(ctx string) string {
		c := ""
		if ctx != "" {
			c = fmt.Sprintf(`,"contextId":%q`, ctx)
		}
		return `{"kind":"message","role":"agent","messageId":"r"` + c + `,"parts":[` + textPart("another conversation's reply") + `]}`
	}
	for _, tc := range []struct {
		name      string
		streaming bool
		setup     func(s *scripted)
		lost      bool // no task of this context to read: ErrNoTask too
	}{
		{"a message sent", false, func(s *scripted) {
			s.send = func(w io.Writer, id, _ string) { rpcOK(w, id, message("other-ctx")) }
		}, true},
		{"a task sent", false, func(s *scripted) {
			s.send = func(w io.Writer, id, _ string) {
				rpcOK(w, id, taskJSON("other-ctx", "completed", "", "another conversation's reply"))
			}
		}, true},
		{"a streamed event", true, func(s *scripted) {
			s.stream = func(w io.Writer, id, _ string) {
				sse(w, id, taskJSON("other-ctx", "completed", "", "another conversation's reply"))
			}
		}, true},
		{"a task read", false, func(s *scripted) {
			s.send = func(w io.Writer, id, ctx string) { rpcOK(w, id, taskJSON(ctx, "working", "", "")) }
			s.get = func(w io.Writer, id, _ string) {
				rpcOK(w, id, taskJSON("other-ctx", "completed", "", "another conversation's reply"))
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScripted(t)
			tc.setup(s)
			out, _ := s.deliver(t, tc.streaming)
			if out.State != "" || !errors.Is(out.Err, ErrOtherContext) || errors.Is(out.Err, ErrNoTask) != tc.lost || !MayHaveArrived(out.Err) {
				t.Fatalf("got state %q, reply %q, err %v", out.State, out.Reply, out.Err)
			}
			if s.sends.Load()+s.streams.Load() != 1 || tc.lost && s.gets.Load() != 0 || !tc.lost && s.gets.Load() != 1 {
				t.Errorf("%d sends, %d streams, %d reads", s.sends.Load(), s.streams.Load(), s.gets.Load())
			}
			if !strings.Contains(out.Err.Error(), `the agent answered for context "other-ctx", not for the context ctx-1 the message was sent in`) {
				t.Errorf("error %q", out.Err)
			}
		})
	}
	for _, ctx := range []string{"", "ctx-1"} {
		t.Run(fmt.Sprintf("contextId %q is the reply", ctx), func(t *testing.T) {
			t.Parallel()
			s := newScripted(t)
			s.send = func(w io.Writer, id, _ string) { rpcOK(w, id, message(ctx)) }
			if out, _ := s.deliver(t, false); out.State != StateCompleted || out.Reply != "another conversation's reply" {
				t.Fatalf("got %+v", out)
			}
		})
	}
}

// TestTaskListingIgnoresNoBound: a server that ignores pageSize, with
// pages of 5,000 tasks and always a next page, is read to the listing's
// bound (20 pages' worth: 2,000 tasks, 400 with history) and no further:
// the rest of the page is not decoded, no page follows, and the listing
// says there is more. With history, each task keeps its 100 newest
// message ids.
func TestTaskListingIgnoresNoBound(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		page := gjson.GetBytes(body, "params.pageToken").Int()
		withHistory := gjson.GetBytes(body, "params.historyLength").Int() > 0
		var b strings.Builder
		for i := range 5000 {
			if i > 0 {
				b.WriteByte(',')
			}
			history := ""
			if withHistory && i < 3 {
				var h []string
				for m := range 300 {
					h = append(h, fmt.Sprintf(`{"messageId":"m-%d-%d"}`, i, m))
				}
				history = `,"history":[` + strings.Join(h, ",") + `]`
			}
			fmt.Fprintf(&b, `{"id":"t-%d-%d","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","message":{"parts":[{"text":%q}]}}%s}`, page, i, strings.Repeat("s", 100), history)
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[%s],"nextPageToken":"%d"}}`, gjson.GetBytes(body, "id").Raw, b.String(), page+1)
	}))
	t.Cleanup(srv.Close)
	c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := c.TaskList(ctx, TaskFilter{}, 0)
	if err != nil || len(l.Tasks) != maxTaskPages*taskPageSize || !l.More || calls.Load() != 1 {
		t.Fatalf("%d tasks, more %v, %d pages, %v; want 2000, more, 1", len(l.Tasks), l.More, calls.Load(), err)
	}
	calls.Store(0)
	tasks, err := c.ContextTasks(ctx, "c1", true)
	if err != nil || len(tasks) != maxTaskPages*historyPageSize || calls.Load() != 1 {
		t.Fatalf("with history: %d tasks, %d pages, %v; want 400, 1", len(tasks), calls.Load(), err)
	}
	for _, ti := range tasks[:3] {
		if len(ti.MessageIDs) != taskHistoryLength || !strings.HasSuffix(ti.MessageIDs[len(ti.MessageIDs)-1], "-299") {
			t.Fatalf("task %s keeps %d message ids, the last %q", ti.ID, len(ti.MessageIDs), ti.MessageIDs[len(ti.MessageIDs)-1])
		}
	}
	if l, err := c.TaskList(ctx, TaskFilter{}, 5); err != nil || len(l.Tasks) != 5 || !l.More {
		t.Fatalf("limit 5: %d tasks, more %v, %v", len(l.Tasks), l.More, err)
	}
}
