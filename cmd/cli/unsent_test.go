package cli

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/store"
)

// scriptedAgent is a generic A2A 0.3 agent on loopback: its card, then
// message/send, tasks/get and tasks/cancel answered by the test.
type scriptedAgent struct {
	srv                  *httptest.Server
	send, get, cancel    func(w http.ResponseWriter, id string)
	sends, gets, cancels atomic.Int32
	// context is the contextId of the last message sent: a2aTask's
	// "srv-ctx" is written as it.
	context atomic.Value
}

// contextWriter writes a scripted answer's contextId (from) as the one a
// message named (to), as servers echo it.
type contextWriter struct {
	http.ResponseWriter
	from, to string
}

// Hijack lets a test cut the connection, as without the writer.
func (w contextWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w contextWriter) Write(b []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, []byte(`"contextId":"`+w.from+`"`), []byte(`"contextId":"`+w.to+`"`))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func newScriptedAgent(t *testing.T) *scriptedAgent {
	t.Helper()
	a := &scriptedAgent{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"name":"S","protocolVersion":"0.3.0","url":"`+a.srv.URL+`/","capabilities":{}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		if c := gjson.GetBytes(body, "params.message.contextId").String(); c != "" {
			a.context.Store(c)
		}
		if c, ok := a.context.Load().(string); ok {
			// The task is the context's the message named, as servers echo it.
			w = contextWriter{w, "srv-ctx", c}
		}
		var f func(http.ResponseWriter, string)
		switch gjson.GetBytes(body, "method").String() {
		case "message/send":
			a.sends.Add(1)
			f = a.send
		case "tasks/get":
			a.gets.Add(1)
			f = a.get
		case "tasks/cancel":
			a.cancels.Add(1)
			f = a.cancel
		}
		if f == nil {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		f(w, id)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func a2aTask(id, state, text string) string {
	msg := ""
	if text != "" {
		msg = `,"message":{"kind":"message","role":"agent","messageId":"` + uuid.NewString() + `","parts":[{"kind":"text","text":"` + text + `"}]}`
	}
	return `{"kind":"task","id":"` + id + `","contextId":"srv-ctx","status":{"state":"` + state + `"` + msg + `}}`
}

func rpcResultOf(w http.ResponseWriter, id, result string) {
	io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":`+result+`}`)
}

// queueAnswer turns a record into what `send --task` leaves while its answer
// waits to be sent (a 429's Retry-After, a worker killed): queued, its text
// in it, a new message id, the task it answers.
func queueAnswer(t *testing.T, h *harness, ctxID, taskID, question string) string {
	t.Helper()
	mid := uuid.NewString()
	editRecord(t, h, ctxID, func(x *store.Record) {
		x.State, x.Message, x.MessageID, x.AnswersTask, x.TaskID, x.Question = store.Queued, "Ada", mid, taskID, taskID, question
		x.Reply, x.FinishedAt, x.SentAt, x.Reason = "", nil, nil, ""
	})
	return mid
}

// checkQueued checks that a record is still the unsent answer.
func checkQueued(t *testing.T, h *harness, ctxID, mid string) {
	t.Helper()
	rec := loadRecord(t, h, ctxID)
	if rec.State != store.Queued || rec.Message != "Ada" || rec.MessageID != mid || rec.FinishedAt != nil {
		t.Fatalf("the unsent answer was overwritten: %+v", rec)
	}
}

// TestFetchNeverOverwritesAnUnsentAnswer: an answer waiting to be sent
// (queued) carries the id of the task it answers; fetch must never write
// the task's state into it, which would delete the answer's text.
func TestFetchNeverOverwritesAnUnsentAnswer(t *testing.T) {
	t.Parallel()
	const question = "What is your name?"
	// The agent asked; the task was since answered elsewhere and completed.
	asker := func(t *testing.T) *scriptedAgent {
		a := newScriptedAgent(t)
		a.send = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-1", "input-required", question)) }
		a.get = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-1", "completed", "Hello, Bob!")) }
		return a
	}
	for _, withURL := range []bool{true, false} {
		name := "fetch --task with --url"
		if !withURL {
			name = "fetch --task with the record's agent"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := asker(t)
			h := newHarness(t, nil)
			r := h.run("send", "--url", a.srv.URL, "start", "--json")
			r.expect(t, ExitInputRequired)
			ctxID := decodeTask(t, r.stdout).ContextID
			mid := queueAnswer(t, h, ctxID, "t-1", question)
			args := []string{"fetch", "--task", "t-1", "--json"}
			if withURL {
				args = append(args, "--url", a.srv.URL)
			}
			r = h.run(args...)
			r.expect(t, ExitStillRunning)
			if d := decodeTask(t, r.stdout); d.State != "queued" || d.ContextID != ctxID || d.Resume != "a2a-courier result "+ctxID+" --wait --json" {
				t.Fatalf("%+v", d)
			}
			checkQueued(t, h, ctxID, mid)
		})
	}
	t.Run("an answer queued while fetch reads", func(t *testing.T) {
		t.Parallel()
		a := newScriptedAgent(t)
		a.send = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-2", "completed", "first reply")) }
		h := newHarness(t, nil)
		r := h.run("send", "--url", a.srv.URL, "start", "--json")
		r.expect(t, ExitOK)
		ctxID := decodeTask(t, r.stdout).ContextID
		editRecord(t, h, ctxID, func(x *store.Record) { x.State, x.Reply, x.FinishedAt = store.Expired, "", nil })
		var mid atomic.Value
		a.get = func(w http.ResponseWriter, id string) {
			// Between fetch's read of the record and its write, a send puts
			// a new message in the context, still to be sent.
			mid.Store(queueAnswer(t, h, ctxID, "t-2", ""))
			rpcResultOf(w, id, a2aTask("t-2", "completed", "first reply"))
		}
		r = h.run("fetch", ctxID, "--json")
		r.expect(t, ExitOK)
		if d := decodeTask(t, r.stdout); d.State != "completed" || *d.Reply != "first reply" {
			t.Fatalf("%+v", d)
		}
		checkQueued(t, h, ctxID, mid.Load().(string))
	})
	t.Run("Agent Builder: a message queued while fetch reads", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, nil)
		h := newHarness(t, sim)
		// The task is sent through the proxy, so that fetch reads its own
		// Kibana there (a record is read only at its own Kibana).
		origin, _ := url.Parse(sim.URL)
		rp := httputil.NewSingleHostReverseProxy(origin)
		var mid atomic.Value
		var armed atomic.Bool
		var ctxID string
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/") && armed.CompareAndSwap(true, false) {
				mid.Store(queueAnswer(t, h, ctxID, "", ""))
			}
			rp.ServeHTTP(w, r)
		}))
		t.Cleanup(proxy.Close)
		h.env["KIBANA_URL"] = proxy.URL
		r := h.run("send", "elastic-ai-agent", "hello", "--json")
		r.expect(t, ExitOK)
		ctxID = decodeTask(t, r.stdout).ContextID
		editRecord(t, h, ctxID, func(x *store.Record) { x.State, x.Reply, x.FinishedAt = store.Expired, "", nil })
		armed.Store(true)
		r = h.run("fetch", ctxID, "--json")
		r.expect(t, ExitOK)
		if armed.Load() {
			t.Fatal("fetch did not read the conversation")
		}
		checkQueued(t, h, ctxID, mid.Load().(string))
	})
}

// TestCancelOfAnUnsentAnswerStaysLocal: canceling an answer that was never
// sent cancels the record only; the task it answers is not canceled on the
// agent.
func TestCancelOfAnUnsentAnswerStaysLocal(t *testing.T) {
	t.Parallel()
	const question = "What is your name?"
	for _, by := range []string{"contextId", "taskId"} {
		t.Run("by "+by, func(t *testing.T) {
			t.Parallel()
			a := newScriptedAgent(t)
			a.send = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-1", "input-required", question)) }
			a.cancel = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-1", "canceled", "")) }
			h := newHarness(t, nil)
			r := h.run("send", "--url", a.srv.URL, "start", "--json")
			r.expect(t, ExitInputRequired)
			ctxID := decodeTask(t, r.stdout).ContextID
			queueAnswer(t, h, ctxID, "t-1", question)
			id := ctxID
			if by == "taskId" {
				id = "t-1"
			}
			r = h.run("cancel", id, "--json")
			r.expect(t, ExitOK)
			d := decodeTask(t, r.stdout)
			if d.State != "canceled" || !strings.Contains(d.Reason, "before it was sent: nothing ran") {
				t.Fatalf("%+v", d)
			}
			if n := a.cancels.Load(); n != 0 {
				t.Errorf("the agent's task was canceled (%d tasks/cancel) for an answer never sent", n)
			}
			if rec := loadRecord(t, h, ctxID); rec.State != store.Canceled || rec.Message != "" {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

// TestCancelByTaskIDHasNoCreationTime: a task canceled by its id, with no
// local record, has no known start: the document has no created_at.
func TestCancelByTaskIDHasNoCreationTime(t *testing.T) {
	t.Parallel()
	a := newScriptedAgent(t)
	a.cancel = func(w http.ResponseWriter, id string) { rpcResultOf(w, id, a2aTask("t-9", "canceled", "")) }
	h := newHarness(t, nil)
	r := h.run("cancel", "t-9", "--url", a.srv.URL, "--json")
	r.expect(t, ExitOK) // the cancel did what was asked (docs/json.md)
	if d := decodeTask(t, r.stdout); d.State != "canceled" || d.TaskID != "t-9" || d.CreatedAt != nil || a.cancels.Load() != 1 ||
		d.Error != nil || d.ConversationID != "" {
		t.Fatalf("%+v", d)
	}
}

// TestNotCancelableInAnHTTP400: an agent that sends its JSON-RPC error in
// an HTTP 400 is read by the error's code, as in an HTTP 200.
func TestNotCancelableInAnHTTP400(t *testing.T) {
	t.Parallel()
	a := newScriptedAgent(t)
	a.cancel = func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32002,"message":"Task cannot be canceled"}}`)
	}
	h := newHarness(t, nil)
	r := h.run("cancel", "t-9", "--url", a.srv.URL, "--json")
	r.expect(t, ExitTaskFailed)
	if !strings.Contains(r.stdout, `"not_cancelable"`) {
		t.Fatalf("%s", r.stdout)
	}
}
