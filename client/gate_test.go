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
// ends at once, not sent, with its error. Kibana's blocking, task and
// stream paths and a generic agent's message/send and message/stream.
func TestBeforeSendStandsBeforeTheRequest(t *testing.T) {
	t.Parallel()
	// setup starts a server and returns the delivery to it and its count
	// of the messages that reached it (runs on Kibana, sends elsewhere).
	type setup func(t *testing.T) (deliver func(before func() error) Outcome, requests func() int)
	type target struct {
		name  string
		setup setup
	}
	kibana := func(v agentbuildertest.Version, stream, nonBlocking bool) setup {
		return func(t *testing.T) (func(func() error) Outcome, func() int) {
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Version = v
				o.Streaming = &stream
			})
			k := simClient(t, sim, testKey, "")
			return func(before func() error) Outcome {
				o := deliverOpts("echo", "c-gate", "hello")
				o.Stream, o.NonBlocking, o.BeforeSend = stream, nonBlocking, before
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				return k.Deliver(ctx, o)
			}, func() int { return sim.Runs("c-gate") }
		}
	}
	generic := func(stream bool) setup {
		return func(t *testing.T) (func(func() error) Outcome, func() int) {
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
			return func(before func() error) Outcome {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				return c.Deliver(ctx, A2ADeliverOptions{Message: OutgoingMessage{Text: "hi", MessageID: "m-1", ContextID: "c-1"},
					Send: true, Streaming: stream, PollInterval: 10 * time.Millisecond, BeforeSend: before})
			}, func() int { return int(sends.Load()) }
		}
	}
	for _, tg := range []target{
		{"kibana 9.5 blocking", kibana(agentbuildertest.V95, false, false)},
		{"kibana 9.6 task", kibana(agentbuildertest.V96, false, true)},
		{"kibana 9.6 stream", kibana(agentbuildertest.V96, true, false)},
		{"a2a message/send", generic(false)},
		{"a2a message/stream", generic(true)},
	} {
		t.Run(tg.name+"/let through", func(t *testing.T) {
			t.Parallel()
			var calls, seen atomic.Int32
			deliver, reqs := tg.setup(t)
			out := deliver(func() error {
				calls.Add(1)
				seen.Store(int32(reqs()))
				return nil
			})
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
			out := deliver(func() error { calls.Add(1); return errNotRecorded })
			if out.Final() || !out.NotSent() || !errors.Is(out.Err, errNotRecorded) || calls.Load() != 1 {
				t.Fatalf("%d calls, outcome %+v", calls.Load(), out)
			}
			if n := reqs(); n != 0 {
				t.Errorf("%d requests reached the server", n)
			}
		})
	}
}
