package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// editRecord changes a task record as a test needs it.
// editRecord rewrites a record as a test needs it to stand (an earlier
// run's leftovers, an answer queued elsewhere): the file itself, under the
// record's lock, past the state machine that Handle.Update enforces.
func editRecord(t *testing.T, h *harness, ctxID string, f func(*store.Record)) {
	t.Helper()
	st, err := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	lk, err := st.Lock(ctxID)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	rec, err := lk.Load()
	if err != nil {
		t.Fatal(err)
	}
	f(rec)
	plantRecord(t, st, rec)
}

// plantRecord writes a record file as it is, in any state: what an earlier
// run (or an earlier build) left behind.
func plantRecord(t *testing.T, st *store.Store, rec *store.Record) {
	t.Helper()
	rec.Version = store.RecordVersion
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now().UTC()
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteFileAtomic(st.TasksDir(), rec.ContextID+".json", b); err != nil {
		t.Fatal(err)
	}
}

// withPeers gives a harness a config file with peers.
func withPeers(t *testing.T, h *harness, peers map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("peers:\n")
	for name, url := range peers {
		fmt.Fprintf(&b, "  %s:\n    url: %s\n", name, url)
	}
	if err := writePrivate(filepath.Join(dir, "config.yaml"), []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	h.env["A2A_COURIER_CONFIG_DIR"] = dir
}

// TestFetchGenericAgent recovers replies of generic A2A agents by
// contextId, against the a2a-js v1.0 server (and a2a-go for 0.3): which
// task is taken, how states map to exit codes, and what is written back.
func TestFetchGenericAgent(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	slow := js.URL(interoptest.MountV1, interoptest.AgentSlow)

	t.Run("newest task, or the one holding the record's message", func(t *testing.T) {
		t.Parallel()
		a, b, c := newHarness(t, nil), newHarness(t, nil), newHarness(t, nil)
		r := a.run("send", "--url", slow, "chunks=1 delay=1ms", "--json")
		r.expect(t, ExitOK)
		first := decodeTask(t, r.stdout)
		time.Sleep(5 * time.Millisecond) // status timestamps have millisecond precision
		r = b.run("send", "--url", slow, "--context", first.ContextID, "chunks=2 delay=1ms", "--json")
		r.expect(t, ExitOK)
		second := decodeTask(t, r.stdout)
		if second.ContextID != first.ContextID || second.TaskID == first.TaskID {
			t.Fatalf("%+v %+v", first, second)
		}

		// No record: the newest task of the context, and a note saying so.
		r = c.run("fetch", first.ContextID, "--url", slow, "--json")
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		// For people, the commands that list the others and read another
		// as command lines (the MCP server's: TestFetchTextsInToolTerms).
		next := "; `a2a-courier tasks --url <agent URL> --context " + first.ContextID + "` lists them, and `a2a-courier fetch --task <taskId> --url <agent URL>` reads another"
		if *d.Reply != slowAnswer(2) || d.TaskID != second.TaskID || !strings.Contains(d.Note, "newest of the 2 tasks") || !strings.HasSuffix(d.Note, next) || d.CreatedAt != nil {
			t.Fatalf("%+v", d)
		}
		r = c.run("fetch", first.ContextID, "--url", slow)
		r.expect(t, ExitOK)
		if r.stdout != slowAnswer(2)+"\n" || !strings.Contains(r.stderr, "newest of the 2 tasks") || !strings.Contains(r.stderr, next+"\n") {
			t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(c.env["A2A_COURIER_STATE_DIR"], "tasks", first.ContextID+".json")); err == nil {
			t.Error("fetch without a record created one")
		}

		// The record's task, not the newest one.
		r = a.run("fetch", first.ContextID)
		r.expect(t, ExitOK)
		if r.stdout != slowAnswer(1)+"\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
		// Lost before the task id was known, and expired: the task holding
		// the record's message, found by ListTasks, is read and recorded.
		editRecord(t, a, first.ContextID, func(x *store.Record) {
			x.TaskID, x.State, x.Reply, x.FinishedAt = "", store.Expired, "", nil
		})
		r = a.run("fetch", first.ContextID, "--json")
		r.expect(t, ExitOK)
		d = decodeTask(t, r.stdout)
		if *d.Reply != slowAnswer(1) || d.TaskID != first.TaskID || d.Note != "" {
			t.Fatalf("%+v", d)
		}
		rec := loadRecord(t, a, first.ContextID)
		if rec.State != store.Completed || rec.Reply != slowAnswer(1) || rec.Via != "fetch" || rec.TaskID != first.TaskID {
			t.Errorf("record %+v", rec)
		}
	})

	t.Run("a peer, and an agent that asks", func(t *testing.T) {
		t.Parallel()
		a, b := newHarness(t, nil), newHarness(t, nil)
		peers := map[string]string{"asker": js.URL(interoptest.MountV1, interoptest.AgentAsk)}
		withPeers(t, a, peers)
		withPeers(t, b, peers)
		r := a.run("send", "asker", "start", "--json")
		r.expect(t, ExitInputRequired)
		sent := decodeTask(t, r.stdout)
		r = b.run("fetch", sent.ContextID, "asker", "--json")
		r.expect(t, ExitInputRequired)
		d := decodeTask(t, r.stdout)
		if d.State != "input_required" || *d.Reply != interoptest.AskQuestion || d.TaskID != sent.TaskID ||
			d.Answer != fmt.Sprintf(`a2a-courier send asker --task %s --json -`, sent.TaskID) {
			t.Fatalf("%+v", d)
		}
		// The answer from the other machine completes it; fetch sees that.
		r = b.run("send", "asker", "--task", sent.TaskID, "Ada")
		r.expect(t, ExitOK)
		r = a.run("fetch", sent.ContextID, "--json")
		r.expect(t, ExitOK)
		if d := decodeTask(t, r.stdout); !strings.Contains(*d.Reply, "Hello, Ada!") {
			t.Fatalf("%+v", d)
		}
	})

	t.Run("still running", func(t *testing.T) {
		t.Parallel()
		a, b := newHarness(t, nil), newHarness(t, nil)
		r := a.run("send-async", "--url", slow, "chunks=100 delay=200ms", "--no-stream", "--poll-interval", "100ms")
		r.expect(t, ExitOK)
		ctxID := strings.TrimSpace(r.stdout)
		defer waitWorkersGone(a.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
		defer a.run("cancel", ctxID)
		waitUntil(t, "the task id", 20*time.Second, func() bool { return loadRecord(t, a, ctxID).TaskID != "" })
		r = b.run("fetch", ctxID, "--url", slow, "--json")
		r.expect(t, ExitStillRunning)
		d := decodeTask(t, r.stdout)
		if d.State != "working" || d.Reply != nil || d.Resume != "a2a-courier fetch "+ctxID+" --url "+slow+" --json" || !strings.Contains(d.Reason, "working on the agent") {
			t.Fatalf("%+v", d)
		}
		r = b.run("fetch", ctxID, "--url", slow)
		r.expect(t, ExitStillRunning)
		if !strings.Contains(r.stderr, "resume with: a2a-courier fetch "+ctxID+" --url "+slow) {
			t.Errorf("stderr %q", r.stderr)
		}
		// Where a worker follows it, result --wait is the way on.
		r = a.run("fetch", ctxID, "--json")
		r.expect(t, ExitStillRunning)
		if d := decodeTask(t, r.stdout); d.Resume != "a2a-courier result "+ctxID+" --wait --json" {
			t.Fatalf("%+v", d)
		}
	})

}

// TestFetchGenericAgentRefusals: a context with no task, credentials
// resolved as send resolves them, and a 0.3 agent that cannot list tasks.
func TestFetchGenericAgentRefusals(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	gos := interoptest.StartGo(t)
	slow := js.URL(interoptest.MountV1, interoptest.AgentSlow)

	t.Run("nothing in the context", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		r := h.run("fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--url", slow, "--json")
		r.expect(t, ExitNotFound)
		var doc struct{ Error errorDoc }
		json.Unmarshal([]byte(r.stdout), &doc)
		if doc.Error.Code != "not_found" || !strings.Contains(doc.Error.Message, "lists no task in context") {
			t.Fatalf("%+v", doc.Error)
		}
	})

	t.Run("credentials as send resolves them", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		url := js.URL(interoptest.MountV1, interoptest.AgentSecure)
		ctxID := "3f6c2e1a-0000-4000-8000-000000000001"
		r := h.run("fetch", ctxID, "--url", url)
		r.expect(t, ExitAuth)
		tok := filepath.Join(t.TempDir(), "token")
		if err := writePrivate(tok, []byte(js.Token+"\n")); err != nil {
			t.Fatal(err)
		}
		// Accepted: the echo agent answers with messages, so the context
		// holds no task, and fetch says why.
		r = h.run("fetch", ctxID, "--url", url, "--token-file", tok)
		r.expect(t, ExitNotFound)
		if !strings.Contains(r.stderr, "answered with a message") || !strings.Contains(r.stderr, ": `a2a-courier result ") || !strings.Contains(r.stderr, " "+ctxID+"` shows it where it was sent\n") {
			t.Errorf("stderr %q", r.stderr)
		}
		h.env["A2A_COURIER_TOKEN"], h.env["A2A_COURIER_TOKEN_ORIGIN"] = js.Token, js.Origin
		r = h.run("fetch", ctxID, "--url", url)
		r.expect(t, ExitNotFound)
		if strings.Contains(r.stdout+r.stderr, js.Token) {
			t.Error("the token reached the output")
		}
	})

	t.Run("a 0.3 record without its task id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		url := gos.URL(interoptest.MountGo, interoptest.AgentSlow)
		r := h.run("send", "--url", url, "chunks=1 delay=1ms", "--json")
		r.expect(t, ExitOK)
		ctxID := decodeTask(t, r.stdout).ContextID
		editRecord(t, h, ctxID, func(x *store.Record) { x.TaskID, x.State, x.Reply = "", store.Expired, "" })
		r = h.run("fetch", ctxID)
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, "A2A 0.3, which cannot list tasks by contextId") || !strings.Contains(r.stderr, "fetch --task <taskId> --url "+url) {
			t.Errorf("stderr %q", r.stderr)
		}
	})
}

// TestFetchArguments: ids that are not ids, and agents named wrongly, are
// usage errors (exit 2), never "still running".
func TestFetchArguments(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"spaces", []string{"fetch", "not a uuid"}, "invalid contextId"},
		{"path", []string{"fetch", "../../etc/passwd"}, "invalid contextId"},
		{"slash", []string{"fetch", "a/b"}, "invalid contextId"},
		{"dot first", []string{"fetch", ".hidden"}, "invalid contextId"},
		{"empty", []string{"fetch", ""}, "the contextId is empty"},
		{"none", []string{"fetch"}, "fetch needs a contextId"},
		{"bad task id", []string{"fetch", "--task", "a b", "--url", "http://127.0.0.1:1"}, "invalid task id"},
		{"task and two arguments", []string{"fetch", "--task", "t1", "p1", "p2"}, "the only argument is the agent's peer name"},
		{"peer and --url", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "lab", "--url", "http://127.0.0.1:1"}, "both a peer"},
		{"unknown peer", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "nosuchpeer"}, `no peer "nosuchpeer"`},
		{"unknown protocol", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--protocol", "2.0"}, "unknown protocol"},
		{"protocol for Kibana", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--protocol", "1.0"}, "--protocol, --binding or --state without an A2A agent"},
		{"binding for Kibana", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--binding", "bogus"}, "--protocol, --binding or --state without an A2A agent"},
		{"state for Kibana", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--state", "completed"}, "--protocol, --binding or --state without an A2A agent"},
		{"gRPC", []string{"fetch", "3f6c2e1a-0000-4000-8000-000000000000", "--url", "http://127.0.0.1:1", "--binding", "grpc"}, "gRPC is not supported"},
		{"three arguments", []string{"fetch", "a", "b", "c"}, "fetch takes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sim)
			r := h.run(append(tc.args, "--json")...)
			r.expect(t, ExitUsage)
			var doc struct{ Error errorDoc }
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !strings.Contains(doc.Error.Message, tc.want) || doc.Error.Hint == "" {
				t.Fatalf("%v %s", err, r.stdout)
			}
		})
	}
}

// TestFetchKibanaUnknownIDs: Kibana stores a conversation only when its
// run ends, so an unknown UUID may be a run still going (exit 8); an id of
// another form, with no local record, is a wrong handle (exit 5), with
// a hint that a2a-courier's ids are UUIDs.
func TestFetchKibanaUnknownIDs(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	var doc struct{ Error errorDoc }

	r := h.run("fetch", "not-a-uuid", "--json")
	r.expect(t, ExitNotFound)
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "not_found" || !strings.Contains(doc.Error.Hint, "are UUIDs") || !strings.Contains(doc.Error.Hint, "--url") {
		t.Fatalf("%+v", doc.Error)
	}

	ctxID := "3f6c2e1a-0000-4000-8000-000000000000"
	r = h.run("fetch", "a2a-"+ctxID)
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "that is a conversation id: its contextId is "+ctxID) {
		t.Errorf("stderr %q", r.stderr)
	}

	r = h.run("fetch", ctxID, "--json")
	r.expect(t, ExitStillRunning)
	// Nothing says when it started: no created_at (not the time of this
	// fetch).
	if d := decodeTask(t, r.stdout); !strings.Contains(d.Reason, "add --url <agent URL> or the peer's name") || d.Resume != "a2a-courier fetch "+ctxID+" --json" || d.CreatedAt != nil {
		t.Fatalf("%+v", d)
	}

	// A well-formed id a2a-courier did not make, but a run of another
	// client stored under it, is read.
	otherClientSends(t, sim, "elastic-ai-agent", "my-own-ctx", "hello")
	r = h.run("fetch", "my-own-ctx")
	r.expect(t, ExitOK)
	if r.stdout != "Echo: hello\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	// Its created_at is the conversation's, the same at every fetch.
	r = h.run("fetch", "my-own-ctx", "--json")
	r.expect(t, ExitOK)
	first := decodeTask(t, r.stdout)
	r = h.run("fetch", "my-own-ctx", "--json")
	r.expect(t, ExitOK)
	if again := decodeTask(t, r.stdout); first.CreatedAt == nil || again.CreatedAt == nil || !first.CreatedAt.Equal(*again.CreatedAt) {
		t.Errorf("created_at %v then %v", first.CreatedAt, again.CreatedAt)
	}
}

// otherClientSends sends a blocking message/send to a simulator's agent
// as another A2A client would, under a contextId of its choosing.
func otherClientSends(t *testing.T, sim *agentbuildertest.Server, agent, contextID, text string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":%q,"contextId":%q,"parts":[{"kind":"text","text":%q}]}}}`,
		uuid.NewString(), contextID, text)
	req, _ := http.NewRequest(http.MethodPost, sim.URL+"/api/agent_builder/a2a/"+agent, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "ApiKey "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

// fetch of a task this machine recorded as completed, whose conversation
// the server no longer has (deleted, or another Kibana configured), says
// that the outcome is the local record's, in --json too.
func TestFetchSaysTheOutcomeIsLocal(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	r := h.run("send", "elastic-ai-agent", "kept here", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	req, _ := http.NewRequest(http.MethodDelete, sim.URL+"/api/agent_builder/conversations/a2a-"+d.ContextID, nil)
	req.Header.Set("Authorization", "ApiKey "+testKey)
	req.Header.Set("kbn-xsrf", "true")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("delete: %v %v", resp, err)
	}
	r = h.run("fetch", d.ContextID, "--json")
	r.expect(t, ExitOK)
	f := decodeTask(t, r.stdout)
	if f.State != "completed" || *f.Reply != *d.Reply || !strings.Contains(f.Note, "this is the outcome recorded on this machine") {
		t.Errorf("%+v", f)
	}
	r = h.run("fetch", d.ContextID)
	r.expect(t, ExitOK)
	if r.stdout != *d.Reply+"\n" || !strings.Contains(r.stderr, "the server has no reply stored for this context in space default: this is the outcome recorded on this machine") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}
