package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// faultAgent is a JSON-RPC agent whose answers a test scripts: send
// answers message/send (SendMessage), get answers the n-th task read (from
// 0), list the n-th ListTasks.
type faultAgent struct {
	send func(w http.ResponseWriter, id string)
	get  func(w http.ResponseWriter, id string, n int)
	list func(w http.ResponseWriter, id, params string, n int)

	mu                  sync.Mutex
	sends, gets, lists  int
	methods             []string
	gotHistory, gotPage []string
}

func (f *faultAgent) start(t *testing.T, dialect Dialect) *A2A {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		params := gjson.GetBytes(body, "params").Raw
		method := gjson.GetBytes(body, "method").String()
		f.mu.Lock()
		f.methods = append(f.methods, method)
		var n int
		switch method {
		case "message/send", "SendMessage":
			f.sends++
		case "tasks/get", "GetTask":
			n = f.gets
			f.gets++
		case "ListTasks":
			n = f.lists
			f.lists++
			f.gotHistory = append(f.gotHistory, gjson.Get(params, "historyLength").Raw)
			f.gotPage = append(f.gotPage, gjson.Get(params, "pageSize").Raw)
		}
		f.mu.Unlock()
		switch {
		case (method == "message/send" || method == "SendMessage") && f.send != nil:
			f.send(w, id)
		case (method == "tasks/get" || method == "GetTask") && f.get != nil:
			f.get(w, id, n)
		case method == "ListTasks" && f.list != nil:
			f.list(w, id, params, n)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: dialect})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *faultAgent) counts() (sends, gets, lists int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends, f.gets, f.lists
}

func workingTask03(w http.ResponseWriter, id string) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"working"}}}`, id)
}

func rpcErr(w http.ResponseWriter, status int, id string, code int, extra string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"error %d"%s}}`, id, code, code, extra)
}

// TestTaskReadErrorsAreNotLoss: a JSON-RPC error other than TaskNotFound,
// or an HTTP 400 or 404, on a task the server named is a failed read, not a
// lost task: the task is read again and its outcome taken.
func TestTaskReadErrorsAreNotLoss(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault func(w http.ResponseWriter, id string)
	}{
		{"-32603 in HTTP 200", func(w http.ResponseWriter, id string) {
			rpcErr(w, http.StatusOK, id, -32603, "")
		}},
		{"-32602 in HTTP 400", func(w http.ResponseWriter, id string) {
			rpcErr(w, http.StatusBadRequest, id, -32602, "")
		}},
		{"HTTP 400 from a proxy", func(w http.ResponseWriter, id string) {
			http.Error(w, "bad request", http.StatusBadRequest)
		}},
		{"HTTP 404 without a JSON-RPC error", func(w http.ResponseWriter, id string) {
			http.Error(w, "no route", http.StatusNotFound)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &faultAgent{send: workingTask03, get: func(w http.ResponseWriter, id string, n int) {
				switch n {
				case 0, 1:
					tc.fault(w, id)
				default:
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"m","parts":[{"kind":"text","text":"done"}]}}}}`, id)
				}
			}}
			c := f.start(t, V03)
			var pollErrors atomic.Int32
			out := c.Deliver(context.Background(), A2ADeliverOptions{
				Message: OutgoingMessage{Text: "hi", MessageID: uuid.NewString()}, Send: true, PollInterval: time.Millisecond,
				OnEvent: func(e Event) {
					if e.Kind == "poll_error" {
						pollErrors.Add(1)
					}
				},
			})
			if out.State != StateCompleted || out.Reply != "done" || out.Err != nil {
				t.Fatalf("%+v", out)
			}
			if sends, gets, _ := f.counts(); sends != 1 || gets != 3 || pollErrors.Load() != 2 {
				t.Errorf("%d sends, %d reads, %d poll errors", sends, gets, pollErrors.Load())
			}
		})
	}
	t.Run("an error that never passes ends with the wait, not as lost", func(t *testing.T) {
		t.Parallel()
		f := &faultAgent{send: workingTask03, get: func(w http.ResponseWriter, id string, n int) {
			rpcErr(w, http.StatusOK, id, -32603, "")
		}}
		c := f.start(t, V03)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := c.Deliver(ctx, A2ADeliverOptions{
			Message: OutgoingMessage{Text: "hi", MessageID: uuid.NewString()}, Send: true, PollInterval: time.Millisecond,
			OnEvent: func(e Event) {
				if e.Kind == "poll_error" {
					if _, gets, _ := f.counts(); gets >= 5 {
						cancel()
					}
				}
			},
		})
		if out.Final() || errors.Is(out.Err, ErrTaskGone) || rpcCode(out.Err) != -32603 {
			t.Fatalf("%+v", out)
		}
	})
}

// TestTaskNotFoundIsGone: TaskNotFoundError on the task the server named
// ends the delivery at once, as ErrTaskGone, however it is carried.
func TestTaskNotFoundIsGone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault func(w http.ResponseWriter, id string)
	}{
		{"-32001 in HTTP 200", func(w http.ResponseWriter, id string) {
			rpcErr(w, http.StatusOK, id, -32001, "")
		}},
		{"-32001 in HTTP 404", func(w http.ResponseWriter, id string) {
			rpcErr(w, http.StatusNotFound, id, -32001, "")
		}},
		{"v1.0 reason TASK_NOT_FOUND", func(w http.ResponseWriter, id string) {
			rpcErr(w, http.StatusOK, id, -32001, `,"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]`)
		}},
		{"google.rpc.Status NOT_FOUND with reason TASK_NOT_FOUND", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"status":"NOT_FOUND","message":"task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &faultAgent{send: workingTask03, get: func(w http.ResponseWriter, id string, n int) {
				if n < 5 {
					tc.fault(w, id)
					return
				}
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"completed"}}}`, id)
			}}
			c := f.start(t, V03)
			out := c.Deliver(context.Background(), A2ADeliverOptions{
				Message: OutgoingMessage{Text: "hi", MessageID: uuid.NewString()}, Send: true, PollInterval: time.Millisecond,
			})
			if !errors.Is(out.Err, ErrTaskGone) || out.Final() {
				t.Fatalf("%+v", out)
			}
			if _, gets, _ := f.counts(); gets != 1 {
				t.Errorf("%d reads", gets)
			}
			if !strings.Contains(out.Err.Error(), "get task t-1") {
				t.Errorf("%v", out.Err)
			}
		})
	}
}

func cutConnection(w http.ResponseWriter, _ string) {
	// The request arrived; the answer never comes back.
	conn, _, _ := w.(http.Hijacker).Hijack()
	conn.Close()
}

// TestLostSendIsLookedForAgain: a send cut before the server named its task
// is looked for with ListTasks more than once, since the task may not be
// listed yet; only a bounded number of empty listings make it lost, and a
// dialect that cannot list makes it lost at once.
func TestLostSendIsLookedForAgain(t *testing.T) {
	t.Parallel()
	msgID := uuid.NewString()
	listed := func(w http.ResponseWriter, id string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[{"id":"t-9","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":%q,"role":"ROLE_USER","parts":[{"text":"hi"}]}]}],"nextPageToken":""}}`, id, msgID)
	}
	empty := func(w http.ResponseWriter, id string) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[],"nextPageToken":""}}`, id)
	}
	deliver := func(c *A2A) Outcome {
		return c.Deliver(context.Background(), A2ADeliverOptions{
			Message: OutgoingMessage{Text: "hi", MessageID: msgID, ContextID: "c-1"}, Send: true, PollInterval: time.Millisecond,
		})
	}
	t.Run("listed late", func(t *testing.T) {
		t.Parallel()
		f := &faultAgent{send: cutConnection,
			list: func(w http.ResponseWriter, id, _ string, n int) {
				if n < findTaskLooks-1 {
					empty(w, id)
					return
				}
				listed(w, id)
			},
			get: func(w http.ResponseWriter, id string, _ int) {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"id":"t-9","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"found"}]}}}}`, id)
			}}
		out := deliver(f.start(t, V10))
		if out.State != StateCompleted || out.Reply != "found" || out.TaskID != "t-9" {
			t.Fatalf("%+v", out)
		}
		if sends, _, lists := f.counts(); sends != 1 || lists != findTaskLooks {
			t.Errorf("%d sends, %d listings", sends, lists)
		}
	})
	t.Run("never listed", func(t *testing.T) {
		t.Parallel()
		f := &faultAgent{send: cutConnection, list: func(w http.ResponseWriter, id, _ string, _ int) { empty(w, id) }}
		out := deliver(f.start(t, V10))
		if !errors.Is(out.Err, ErrNoTask) || out.Final() || !strings.Contains(out.Err.Error(), "listed no task") {
			t.Fatalf("%+v", out)
		}
		if sends, gets, lists := f.counts(); sends != 1 || gets != 0 || lists != findTaskLooks {
			t.Errorf("%d sends, %d reads, %d listings", sends, gets, lists)
		}
	})
	t.Run("A2A 0.3 cannot list", func(t *testing.T) {
		t.Parallel()
		f := &faultAgent{send: cutConnection}
		out := deliver(f.start(t, V03))
		if !errors.Is(out.Err, ErrNoTask) || out.Final() || !strings.Contains(out.Err.Error(), "cannot list") {
			t.Fatalf("%+v", out)
		}
		if sends, _, lists := f.counts(); sends != 1 || lists != 0 {
			t.Errorf("%d sends, %d listings", sends, lists)
		}
	})
}
