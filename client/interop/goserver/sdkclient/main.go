// Command sdkclient drives an A2A server with a2a-go v0.3.3's own client
// (a2aclient over JSON-RPC, A2A 0.3), for a2a-courier's tests of
// `a2a-courier serve` (internal/serve): send (blocking), stream, get,
// cancel mid-run and resubscribe. It resolves the card with the SDK's
// resolver and prints one JSON line per step on stdout: {"step", "ok",
// ...what it saw}. The token comes from $A2A_SDK_TOKEN. The agent must
// answer a message with its text in capitals, and wait (until canceled)
// when the text holds "wait".
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func out(step string, ok bool, kv map[string]any) {
	if kv == nil {
		kv = map[string]any{}
	}
	kv["step"], kv["ok"] = step, ok
	b, _ := json.Marshal(kv)
	fmt.Println(string(b))
}

func fail(step string, err error) {
	out(step, false, map[string]any{"message": err.Error()})
	os.Exit(1)
}

func text(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.(a2a.TextPart); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func params(s string, blocking bool) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: s})
	m.ContextID = a2a.NewContextID()
	return &a2a.MessageSendParams{Message: m, Config: &a2a.MessageSendConfig{Blocking: &blocking}}
}

func main() {
	url := flag.String("url", "", "the server's base URL")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hc := &http.Client{Transport: bearer{os.Getenv("A2A_SDK_TOKEN")}}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, *url)
	if err != nil {
		fail("card", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		fail("client", err)
	}
	out("client", true, map[string]any{"protocol": card.ProtocolVersion})

	res, err := c.SendMessage(ctx, params("hello from a2a-go", true))
	if err != nil {
		fail("send", err)
	}
	task, _ := res.(*a2a.Task)
	if task == nil {
		fail("send", fmt.Errorf("the result is not a task: %T", res))
	}
	reply := ""
	if len(task.Artifacts) > 0 {
		reply = text(task.Artifacts[0].Parts)
	}
	out("send", true, map[string]any{"state": string(task.Status.State), "reply": reply})

	var kinds []string
	streamed, last := "", ""
	for ev, err := range c.SendStreamingMessage(ctx, params("stream from a2a-go", true)) {
		if err != nil {
			fail("stream", err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			kinds, last = append(kinds, "task"), string(e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			kinds, last = append(kinds, "status-update"), string(e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			kinds, streamed = append(kinds, "artifact-update"), streamed+text(e.Artifact.Parts)
		}
	}
	out("stream", true, map[string]any{"kinds": kinds, "reply": streamed, "state": last})

	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		fail("get", err)
	}
	out("get", true, map[string]any{"state": string(got.Status.State), "reply": text(got.Artifacts[0].Parts)})

	res, err = c.SendMessage(ctx, params("please wait", false))
	if err != nil {
		fail("cancel", err)
	}
	running := res.(*a2a.Task)
	seen := make(chan struct{})
	var subStates []string
	done := make(chan error, 1)
	go func() {
		first := true
		for ev, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: running.ID}) {
			if err != nil {
				done <- err
				return
			}
			switch e := ev.(type) {
			case *a2a.Task:
				subStates = append(subStates, string(e.Status.State))
			case *a2a.TaskStatusUpdateEvent:
				subStates = append(subStates, string(e.Status.State))
			}
			if first {
				first = false
				close(seen)
			}
		}
		done <- nil
	}()
	<-seen
	canceled, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: running.ID})
	if err != nil {
		fail("cancel", err)
	}
	if err := <-done; err != nil {
		fail("cancel", err)
	}
	out("cancel", true, map[string]any{"before": string(running.Status.State), "state": string(canceled.Status.State), "subscribed": subStates})
}
