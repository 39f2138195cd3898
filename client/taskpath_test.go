package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

func TestServerInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info          ServerInfo
		aborts, known bool
		text          string
	}{
		{ServerInfo{Number: "9.5.1", Flavor: "traditional"}, false, true, "9.5.1"},
		{ServerInfo{Number: "9.2.0"}, false, true, "9.2.0"},
		{ServerInfo{Number: "9.6.0", Flavor: "traditional"}, true, true, "9.6.0"},
		{ServerInfo{Number: "9.10.2"}, true, true, "9.10.2"},
		{ServerInfo{Number: "10.0.0"}, true, true, "10.0.0"},
		{ServerInfo{Number: "8.19.3"}, false, true, "8.19.3"},
		{ServerInfo{Number: "9.1.0", Flavor: "serverless"}, true, true, "serverless (9.1.0)"},
		{ServerInfo{Flavor: "serverless"}, true, true, "serverless"},
		{ServerInfo{Number: "nine"}, false, false, "nine"},
		{ServerInfo{}, false, false, "unknown"},
	} {
		aborts, known := tc.info.AbortsOnDisconnect()
		if aborts != tc.aborts || known != tc.known || tc.info.String() != tc.text {
			t.Errorf("%+v: aborts %v known %v %q", tc.info, aborts, known, tc.info.String())
		}
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	for v, want := range map[agentbuildertest.Version]ServerInfo{
		agentbuildertest.V95:         {Number: "9.5.1", Flavor: "traditional"},
		agentbuildertest.V96:         {Number: "9.6.0", Flavor: "traditional"},
		agentbuildertest.VServerless: {Number: "9.7.0", Flavor: "serverless"},
	} {
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = v })
		// In a space too: /api/status lives outside the spaces.
		info, err := simClient(t, sim, prodOnlyKey, "prod").Status(context.Background())
		if err != nil || info != want {
			t.Errorf("%s: %+v %v", v, info, err)
		}
	}
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteStatus, Status: 200, Body: `{"status":{"overall":{"level":"available"}}}`}}
	})
	if _, err := simClient(t, sim, testKey, "").Status(context.Background()); KindOf(err) != KindProtocol {
		t.Errorf("a redacted status: %v", err)
	}
}

// TestDeliverTaskPath follows Kibana 9.6's blocking:false tasks: the task
// is the authority on the state, and the conversation gives the reply.
func TestDeliverTaskPath(t *testing.T) {
	t.Parallel()
	nonBlocking := func(agent, ctx, text string) DeliverOptions {
		o := deliverOpts(agent, ctx, text)
		o.NonBlocking = true
		return o
	}
	t.Run("completed: the reply from the conversation", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
		k := simClient(t, sim, testKey, "")
		var log eventLog
		o := nonBlocking("slow", "c-tp", "follow me")
		o.OnEvent = log.add
		out := k.Deliver(context.Background(), o)
		if out.State != StateCompleted || out.Reply != "Echo: follow me" || out.Via != "conversation" || out.TaskID == "" || !log.has("task") {
			t.Fatalf("%+v", out)
		}
		if sim.Runs("c-tp") != 1 {
			t.Errorf("%d runs", sim.Runs("c-tp"))
		}
	})
	t.Run("completed, conversation unreadable: the task's own text", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Version = agentbuildertest.V96
			// The owner of a Task Manager run's conversation has shifted
			// (Kibana #271650): its GET answers 404.
			o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 404}}
		})
		out := simClient(t, sim, testKey, "").Deliver(context.Background(), nonBlocking("slow", "c-tp404", "no conversation"))
		if out.State != StateCompleted || out.Reply != "Echo: no conversation" || out.Via != "task" {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("failed: at once, with the reason", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
		// (A wait that ran out would end with no state: the task said it.)
		out := simClient(t, sim, testKey, "").Deliver(context.Background(), nonBlocking("broken", "c-tpf", "fail"))
		if out.State != StateFailed || out.Reason != "No complete response received from chat service" || out.Via != "task" {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("a confirmation prompt: read from the conversation", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
		out := simClient(t, sim, testKey, "").Deliver(context.Background(), nonBlocking("asks", "c-tpa", "delete old"))
		if out.State != StateInputRequired || !strings.Contains(out.Reply, "Delete 3 indices") {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("recovery by task id, never sending", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
		k := simClient(t, sim, testKey, "")
		o := nonBlocking("slow", "c-tpr", "revive")
		var taskID string
		ctx, cancel := context.WithCancel(context.Background())
		o.OnEvent = func(e Event) {
			if e.Kind == "task" {
				taskID = e.TaskID
				cancel() // the process dies right after it learned the task
			}
		}
		k.Deliver(ctx, o)
		if taskID == "" {
			t.Fatal("no task")
		}
		r := nonBlocking("slow", "c-tpr", "revive")
		r.Send, r.TaskID = false, taskID
		out := k.Deliver(context.Background(), r)
		if out.State != StateCompleted || out.Reply != "Echo: revive" || sim.Runs("c-tpr") != 1 {
			t.Fatalf("%+v, %d runs", out, sim.Runs("c-tpr"))
		}
	})
	t.Run("an interrupted round on Serverless", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) {
			o.Version = agentbuildertest.VServerless
			o.Faults.ProxyCutAfter = 100 * time.Millisecond
		})
		k := simClient(t, sim, testKey, "")
		// A blocking send on a release that aborts it with its connection:
		// the aborted round says what happened.
		out := k.Deliver(context.Background(), deliverOpts("slow", "c-tpi", "cut me"))
		if out.State != StateCanceled || !strings.Contains(out.Reason, "aborted") {
			t.Fatalf("%+v", out)
		}
		// A failed run's reply says Error: …; its round says failed.
		out = k.Deliver(context.Background(), deliverOpts("broken", "c-tpb", "break"))
		if out.State != StateFailed || out.Reason != "No complete response received from chat service" {
			t.Fatalf("%+v", out)
		}
	})
}

// TestNonsenseRoundIsNotAnAnswer: after a cut, a round in a shape no Kibana
// writes is read again, then the task is lost with a protocol error (its
// outcome cannot be read): never a completed task with an empty reply, and
// not a failure nothing showed. While the POST is open it is only read.
func TestNonsenseRoundIsNotAnAnswer(t *testing.T) {
	t.Parallel()
	for i, round := range []string{`1`, `"x"`, `[]`, `{}`, `null`, `{"input":{"message":"q"}}`, `{"input":{"message":"q"},"response":{"message":7}}`} {
		t.Run(round, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) {
				o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "forever", Name: "Forever", RunTime: time.Hour})
				o.Faults.ProxyCutAfter = 50 * time.Millisecond
			})
			ctxID := fmt.Sprintf("c-nonsense-%d", i)
			sim.PutConversation("", "a2a-"+ctxID, "forever", "svc-a2a", "planted", time.Now(), json.RawMessage(round))
			k := simClient(t, sim, testKey, "")
			out := k.Deliver(context.Background(), deliverOpts("forever", ctxID, "q"))
			if out.Final() || !errors.Is(out.Err, ErrRoundUnreadable) || KindOf(out.Err) != KindProtocol || out.Reply != "" {
				t.Fatalf("%+v", out)
			}
			if sim.Runs(ctxID) != 1 {
				t.Errorf("%d runs", sim.Runs(ctxID))
			}
		})
	}
}

// TestDeliverTaskReadFailures: reading the task can fail while the run
// goes on. TaskNotFound (the execution cleaned up, another space) falls
// back to the conversation; a busy server is waited for; any other error
// reads the conversation that time. Each ends with the reply, one run.
func TestDeliverTaskReadFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault agentbuildertest.StatusFault
		event string
	}{
		{"task not found", agentbuildertest.StatusFault{Route: agentbuildertest.RouteA2A, Status: 200,
			Body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Task not found"}}`}, "no longer finds the task"},
		{"busy", agentbuildertest.StatusFault{Route: agentbuildertest.RouteA2A, Status: 429, RetryAfter: "1", Times: 2}, "busy"},
		{"server error", agentbuildertest.StatusFault{Route: agentbuildertest.RouteA2A, Status: 500, Times: 3}, "reading the task failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
			k := simClient(t, sim, testKey, "")
			o := deliverOpts("slow", "c-trf", "read me")
			o.Message.ContextID = "c-trf-" + strings.ReplaceAll(tc.name, " ", "-")
			o.NonBlocking = true
			var mu sync.Mutex
			var messages []string
			o.OnEvent = func(e Event) {
				mu.Lock()
				messages = append(messages, e.Message)
				mu.Unlock()
				if e.Kind == "task" {
					// The send is answered: from now on the task reads fail.
					sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{tc.fault}})
				}
			}
			out := k.Deliver(context.Background(), o)
			if out.State != StateCompleted || out.Reply != "Echo: read me" || sim.Runs(o.Message.ContextID) != 1 {
				t.Fatalf("%+v, %d runs", out, sim.Runs(o.Message.ContextID))
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(strings.Join(messages, "\n"), tc.event) {
				t.Errorf("events %q", messages)
			}
		})
	}
}

// TestTaskPathUnreadableConversation: on the task path, a completed task
// whose conversation cannot be read (a round in no Kibana shape, a
// conversation over its cap) gives the task's own text, or, with none, ends
// lost: never an empty completed reply, never a read every 5 s for hours.
func TestTaskPathUnreadableConversation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, agent, reply string
		lost               bool
	}{
		{"the task has the text", "echo", "Echo: q", false},
		// A run stopped on a confirmation prompt: completed, no text.
		{"the task has no text", "asks", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = agentbuildertest.V96 })
			k := simClient(t, sim, testKey, "")
			o := deliverOpts(tc.agent, "c-unread-"+strings.ReplaceAll(tc.name, " ", "-"), "q")
			o.NonBlocking = true
			o.OnEvent = func(e Event) {
				if e.Kind == "task" {
					// From now on the conversation is a scalar round.
					sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 200,
						Body: `{"id":"a2a-x","rounds":[7]}`}}})
				}
			}
			out := k.Deliver(context.Background(), o)
			if tc.lost {
				if out.Final() || !errors.Is(out.Err, ErrRoundUnreadable) {
					t.Fatalf("%+v", out)
				}
				return
			}
			if out.State != StateCompleted || out.Reply != tc.reply || out.Via != "task" {
				t.Fatalf("%+v", out)
			}
		})
	}
}
