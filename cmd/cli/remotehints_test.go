package cli

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// TestRemoteErrorsSpeakOfTheAgent: an error met with a generic A2A agent
// (--url) is reported with a hint about the agent, not about Kibana
// (remoteHint), whether it was met resolving the agent (send, get-card,
// fetch, cancel, tasks) or once the command talks to it (fetch --task
// refused with 401): the command says so by its error (remoteErr), not
// by a flag of the App.
func TestRemoteErrorsSpeakOfTheAgent(t *testing.T) {
	t.Parallel()
	down := closedURL(t)
	const ctxID = "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd"
	for _, args := range [][]string{
		{"send", "--url", down, "hi"},
		{"get-card", "--url", down},
		{"fetch", ctxID, "--url", down},
		{"cancel", ctxID, "--url", down},
		{"tasks", "--url", down},
	} {
		r := newHarness(t, nil).run(append(args, "--json")...)
		r.expect(t, ExitUnreachable)
		if e := decodeError(t, r.stdout); e.Code != "unreachable" || !strings.Contains(e.Hint, "check the agent's URL") || strings.Contains(e.Hint, "Kibana") {
			t.Errorf("%v: %+v", args, e)
		}
	}

	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "agent-card.json") {
			io.WriteString(w, `{"name":"Locked","protocolVersion":"0.3.0","url":"`+srv.URL+`/rpc","capabilities":{}}`)
			return
		}
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	r := newHarness(t, nil).run("fetch", "--task", "t-1", "--url", srv.URL, "--json")
	r.expect(t, ExitAuth)
	if e := decodeError(t, r.stdout); e.Code != "auth" || !strings.HasPrefix(e.Hint, "the agent wants a credential") {
		t.Errorf("fetch --task: %+v", e)
	}
}

// TestFetchNamesTheTaskSpace: fetch reads a Kibana task in the space it
// was sent to, and its hints name that space as the task's, even when it
// is the configured one too (the space read is kibanaForRecord's value,
// not a field of the App).
func TestFetchNamesTheTaskSpace(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteA2A, Status: 403}}
	})
	h := newHarness(t, sim)
	d := decodeTask(t, h.run("send", "elastic-ai-agent", "hi", "--json").stdout)
	if d.State != "rejected" {
		t.Fatalf("send: %+v", d)
	}
	want := "where task " + d.ContextID + " was sent"
	r := h.run("fetch", d.ContextID)
	r.expect(t, ExitAuth)
	if !strings.Contains(r.stderr, want) {
		t.Errorf("fetch: stderr %s", r.stderr)
	}
	r = h.run("fetch", d.ContextID, "--json")
	r.expect(t, ExitAuth)
	if d := decodeTask(t, r.stdout); d.Error == nil || !strings.Contains(d.Error.Hint, want) {
		t.Errorf("fetch --json: %s", r.stdout)
	}
	sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteConversation, Status: 403}}})
	r = h.run("fetch", d.ContextID, "--json")
	r.expect(t, ExitAuth)
	if e := decodeError(t, r.stdout); !strings.Contains(e.Hint, want) {
		t.Errorf("fetch, its conversation refused: %+v", e)
	}
}
