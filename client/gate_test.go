package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/tidwall/gjson"
)

var errNotRecorded = errors.New("cannot record that it is being sent")

// BeforeSend runs once a connection is made and before the request is on
// it (the server has no request yet when it runs), once per delivery; when
// it fails, nothing of the request reaches the server and the delivery
// ends at once, not sent, with its error (gateTargets).
func TestBeforeSendStandsBeforeTheRequest(t *testing.T) {
	t.Parallel()
	for _, tg := range gateTargets() {
		t.Run(tg.name+"/let through", func(t *testing.T) {
			t.Parallel()
			var calls, seen atomic.Int32
			deliver, reqs := tg.setup(t)
			out := deliver(context.Background(), func() error {
				calls.Add(1)
				seen.Store(int32(reqs()))
				return nil
			}, nil)
			if !out.Final() || out.State != StateCompleted || calls.Load() != 1 {
				t.Fatalf("%d calls, outcome %+v", calls.Load(), out)
			}
			if seen.Load() != 0 || reqs() != 1 {
				t.Errorf("the server had %d requests when BeforeSend ran, %d after", seen.Load(), reqs())
			}
		})
		t.Run(tg.name+"/refused", func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			deliver, reqs := tg.setup(t)
			out := deliver(context.Background(), func() error { calls.Add(1); return errNotRecorded }, nil)
			if out.Final() || !out.NotSent() || !errors.Is(out.Err, errNotRecorded) || calls.Load() != 1 {
				t.Fatalf("%d calls, outcome %+v", calls.Load(), out)
			}
			if n := reqs(); n != 0 {
				t.Errorf("%d requests reached the server", n)
			}
		})
	}
}

// A caller that stops while BeforeSend runs sends nothing (NotSent, no
// sent or written event); one that stops the instant the send is let
// through (EventSent) has its request go out whole all the same.
func TestStopAroundBeforeSend(t *testing.T) {
	t.Parallel()
	for _, tg := range gateTargets() {
		// The caller stops while BeforeSend records that the message
		// leaves: it does not leave, and the outcome says so (NotSent),
		// for the caller to take its record back.
		t.Run(tg.name+"/stopped during BeforeSend", func(t *testing.T) {
			t.Parallel()
			deliver, reqs := tg.setup(t)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var events eventLog
			out := deliver(ctx, func() error { stop(); return nil }, events.add)
			if out.Final() || !out.NotSent() || out.Err != nil && errors.Is(out.Err, errNotRecorded) {
				t.Fatalf("outcome %+v", out)
			}
			if n := reqs(); n != 0 {
				t.Errorf("%d requests reached the server", n)
			}
			if events.has(string(EventSent)) || events.has(string(EventWritten)) {
				t.Errorf("events %v for a send that never left", events.kinds)
			}
		})
		// The caller stops the instant the send is let through (EventSent,
		// on the goroutine that makes the request, before it writes): the
		// request goes out whole all the same, and the outcome is never
		// NotSent.
		t.Run(tg.name+"/stopped once let through", func(t *testing.T) {
			t.Parallel()
			deliver, reqs := tg.setup(t)
			for i := 0; i < 5; i++ {
				ctx, stop := context.WithCancel(context.Background())
				before := reqs()
				out := deliver(ctx, func() error { return nil }, func(e Event) {
					if e.Kind == EventSent {
						stop()
					}
				})
				stop()
				if out.NotSent() {
					t.Fatalf("try %d: a send let through said not sent: %+v", i, out)
				}
				if n := reqs() - before; n != 1 {
					t.Fatalf("try %d: %d requests reached the server", i, n)
				}
			}
		})
	}
}

// gateSetup starts a server and returns the delivery to it and its count
// of the messages that reached it (runs on Kibana, sends elsewhere).
type gateSetup func(t *testing.T) (deliver func(ctx context.Context, before func() error, on func(Event)) Outcome, requests func() int)

type gateTarget struct {
	name  string
	setup gateSetup
}

// gateTargets are Kibana's blocking, task and stream paths and a generic
// agent's message/send and message/stream.
func gateTargets() []gateTarget {
	kibana := func(v agentbuildertest.Version, stream, nonBlocking bool) gateSetup {
		return func(t *testing.T) (func(context.Context, func() error, func(Event)) Outcome, func() int) {
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = v
				o.Streaming = &stream
			})
			k := simClient(t, sim, testKey, "")
			return func(ctx context.Context, before func() error, on func(Event)) Outcome {
				o := deliverOpts("echo", "c-gate", "hello")
				o.Stream, o.NonBlocking, o.BeforeSend, o.OnEvent = stream, nonBlocking, before, on
				ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				return k.Deliver(ctx, o)
			}, func() int { return sim.Runs("c-gate") }
		}
	}
	generic := func(stream bool) gateSetup {
		return func(t *testing.T) (func(context.Context, func() error, func(Event)) Outcome, func() int) {
			var sends atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				id := gjson.GetBytes(body, "id").Raw
				sends.Add(1)
				msg := `{"kind":"message","role":"agent","messageId":"r","parts":[{"kind":"text","text":"hi back"}]}`
				if gjson.GetBytes(body, "method").String() == "message/stream" {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, msg)
					return
				}
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, msg)
			}))
			t.Cleanup(srv.Close)
			c, err := NewA2A(A2AConfig{Endpoint: srv.URL, Dialect: V03})
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context, before func() error, on func(Event)) Outcome {
				ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				return c.Deliver(ctx, A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m-1", ContextID: "c-1"},
					Send: true, Streaming: stream, PollInterval: 10 * time.Millisecond, BeforeSend: before, OnEvent: on})
			}, func() int { return int(sends.Load()) }
		}
	}
	return []gateTarget{
		{"kibana 9.5 blocking", kibana(agentbuildertest.V95, false, false)},
		{"kibana 9.6 task", kibana(agentbuildertest.V96, false, true)},
		{"kibana 9.6 stream", kibana(agentbuildertest.V96, true, false)},
		{"a2a message/send", generic(false)},
		{"a2a message/stream", generic(true)},
	}
}
