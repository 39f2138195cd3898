package cli

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/store"
)

func TestDiscover(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)

	t.Run("terminal", func(t *testing.T) {
		h := newHarness(t, sim)
		h.tty = true
		r := h.run("discover")
		r.expect(t, ExitOK)
		golden(t, "discover-tty", r.stdout)
		if r.stderr != "" {
			t.Errorf("stderr: %q", r.stderr)
		}
	})
	t.Run("narrow terminal", func(t *testing.T) {
		// The description gives way; ids and names stay whole. Narrower
		// still, each agent takes two lines.
		for _, tc := range []struct {
			width int
			want  string
		}{
			{62, "" +
				"╭──────────────────┬──────────────────┬──────────────────────╮\n" +
				"│ ID               │ NAME             │ DESCRIPTION          │\n" +
				"├──────────────────┼──────────────────┼──────────────────────┤\n" +
				"│ asks             │ Asks             │ Asks.                │\n" +
				"│ audit-agent      │ Audit Analyst    │ Analyses audit logs… │\n" +
				"│ elastic-ai-agent │ Elastic AI Agent │ Answers questions a… │\n" +
				"│ flaky-agent      │ Flaky            │ Fails.               │\n" +
				"╰──────────────────┴──────────────────┴──────────────────────╯\n"},
			{61, "" +
				"ID                NAME\n" +
				"  DESCRIPTION\n" +
				"asks              Asks\n" +
				"  Asks.\n" +
				"audit-agent       Audit Analyst\n" +
				"  Analyses audit logs for high-risk operations.\n" +
				"elastic-ai-agent  Elastic AI Agent\n" +
				"  Answers questions about your data. …\n" +
				"flaky-agent       Flaky\n" +
				"  Fails.\n"},
			{50, "" +
				"ID                NAME\n" +
				"  DESCRIPTION\n" +
				"asks              Asks\n" +
				"  Asks.\n" +
				"audit-agent       Audit Analyst\n" +
				"  Analyses audit logs for high-risk operations.\n" +
				"elastic-ai-agent  Elastic AI Agent\n" +
				"  Answers questions about your data. …\n" +
				"flaky-agent       Flaky\n" +
				"  Fails.\n"},
		} {
			h := newHarness(t, sim)
			h.tty, h.width = true, tc.width
			r := h.run("discover")
			r.expect(t, ExitOK)
			if r.stdout != tc.want {
				t.Errorf("width %d:\n%s\nwant:\n%s", tc.width, r.stdout, tc.want)
			}
		}
	})
	t.Run("piped", func(t *testing.T) {
		r := newHarness(t, sim).run("discover")
		r.expect(t, ExitOK)
		want := "asks\tAsks\tAsks.\n" +
			"audit-agent\tAudit Analyst\tAnalyses audit logs for high-risk operations.\n" +
			"elastic-ai-agent\tElastic AI Agent\tAnswers questions about your data. Second line.\n" +
			"flaky-agent\tFlaky\tFails.\n"
		if r.stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := newHarness(t, sim).run("discover", "--json")
		r.expect(t, ExitOK)
		var doc struct {
			Agents []map[string]string `json:"agents"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Agents) != 4 {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		if a := doc.Agents[2]; a["id"] != "elastic-ai-agent" || a["name"] != "Elastic AI Agent" || a["kind"] != "kibana" || len(a) != 4 {
			t.Errorf("agent %v", a)
		}
	})
	t.Run("empty space", func(t *testing.T) {
		h := newHarness(t, sim)
		h.env["KIBANA_SPACE_ID"] = "prod"
		h.env["KIBANA_API_KEY"] = "bm9zcGFjZTprZXk="
		r := h.run("discover", "--json")
		r.expect(t, ExitOK)
		if !strings.HasPrefix(r.stdout, "{\n  \"agents\": [],\n  \"hint\": \"the space has no agents") {
			t.Errorf("stdout %q", r.stdout)
		}
	})
}

func TestErrorsAndExitCodes(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	closedAddr := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		a := ln.Addr().String()
		ln.Close()
		return a
	}()
	busy := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteAgents, Status: 429, RetryAfter: "120"}}
	})
	refuses := startSim(t, func(o *agentbuildertest.Options) {
		o.Faults.Statuses = []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteAgents, Status: 400}}
	})
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		code     int
		errCode  string
		contains string
	}{
		{"bad request", map[string]string{"KIBANA_URL": refuses.URL}, []string{"discover"}, ExitUsage, "bad_request", "HTTP 400"},
		{"not configured", map[string]string{"KIBANA_URL": "", "KIBANA_API_KEY": ""}, []string{"discover"}, ExitUsage, "not_configured", "KIBANA_URL and KIBANA_API_KEY not set"},
		{"bad url", map[string]string{"KIBANA_URL": "kibana.example"}, []string{"discover"}, ExitUsage, "config", "must start with https://"},
		{"ip address without a scheme", map[string]string{"KIBANA_URL": "127.0.0.1:45601"}, []string{"discover"}, ExitUsage, "config", `the Kibana URL "127.0.0.1:45601" must start with https:// or http://`},
		{"agent url without a scheme", nil, []string{"get-card", "--url", "127.0.0.1:45601"}, ExitUsage, "usage", `the agent URL "127.0.0.1:45601" must start with https:// or http://`},
		{"unreachable", map[string]string{"KIBANA_URL": "http://" + closedAddr}, []string{"discover"}, ExitUnreachable, "unreachable", "connection refused"},
		{"key refused", map[string]string{"KIBANA_API_KEY": "d3Jvbmc6a2V5"}, []string{"discover"}, ExitAuth, "auth", "HTTP 401"},
		{"space refused", map[string]string{"KIBANA_API_KEY": "bm9zcGFjZTprZXk="}, []string{"discover"}, ExitAuth, "forbidden", "HTTP 403"},
		{"rate limited", map[string]string{"KIBANA_URL": busy.URL}, []string{"discover"}, ExitBusy, "busy", "HTTP 429"},
		{"unknown agent card", nil, []string{"get-card", "nope"}, ExitNotFound, "not_found", "Agent nope not found"},
		{"bad agent id", nil, []string{"get-card", "../etc"}, ExitUsage, "usage", "invalid agent id"},
		{"unknown command", nil, []string{"dance"}, ExitUsage, "usage", "unknown command"},
		{"unknown flag", nil, []string{"discover", "--fast"}, ExitUsage, "usage", "unknown flag"},
		{"unknown shorthand glued to a value", nil, []string{"discover", "-pSUPERSECRET"}, ExitUsage, "usage", "unknown shorthand flag: 'p'"},
		{"missing argument", nil, []string{"get-card"}, ExitUsage, "usage", "no agent given"},
		{"too many arguments", nil, []string{"send", "a", "b", "c"}, ExitUsage, "usage", "a message that was not quoted"},
		{"unquoted message to send-async", nil, []string{"send-async", "elastic-ai-agent", "hello", "world"}, ExitUsage, "usage", "a message that was not quoted"},
		{"empty message", nil, []string{"send", "elastic-ai-agent", "   "}, ExitUsage, "usage", "the message is empty"},
		{"bad context id", nil, []string{"result", "../../etc/passwd"}, ExitUsage, "usage", "invalid contextId"},
		{"unknown context", nil, []string{"result", "3f6c2e1a-0000-4000-8000-000000000000"}, ExitNotFound, "not_found", "no local record"},
		{"bad duration env", map[string]string{"A2A_COURIER_POLL_INTERVAL": "soon"}, []string{"send", "elastic-ai-agent", "x"}, ExitUsage, "config", "A2A_COURIER_POLL_INTERVAL"},
		{"zero timeout", nil, []string{"discover", "--timeout", "0s"}, ExitUsage, "usage", "--timeout must be positive"},
		{"negative result timeout", nil, []string{"result", "3f6c2e1a-0000-4000-8000-000000000000", "--wait", "--timeout", "-1s"}, ExitUsage, "usage", "--timeout must be positive"},
		{"negative max chars", nil, []string{"send", "elastic-ai-agent", "x", "--max-chars", "-1"}, ExitUsage, "usage", "--max-chars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, jsonMode := range []bool{false, true} {
				h := newHarness(t, sim)
				for k, v := range tt.env {
					if v == "" {
						delete(h.env, k)
					} else {
						h.env[k] = v
					}
				}
				args := tt.args
				if jsonMode {
					args = append(append([]string{}, args...), "--json")
				}
				r := h.run(args...)
				r.expect(t, tt.code)
				if strings.Contains(r.stdout+r.stderr, "goroutine ") || strings.Contains(r.stdout+r.stderr, "panic") {
					t.Fatalf("a stack trace escaped:\n%s%s", r.stdout, r.stderr)
				}
				if jsonMode {
					var doc struct {
						Error errorDoc `json:"error"`
					}
					if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
						t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
					}
					if doc.Error.Code != tt.errCode || !strings.Contains(doc.Error.Message, tt.contains) || doc.Error.Hint == "" {
						t.Errorf("error doc %+v", doc.Error)
					}
					continue
				}
				if r.stdout != "" {
					t.Errorf("stdout must stay empty on error: %q", r.stdout)
				}
				first := strings.SplitN(r.stderr, "\n", 2)[0]
				if !strings.HasPrefix(first, "a2a-courier: ") || !strings.Contains(first, tt.contains) {
					t.Errorf("stderr first line %q, want it to contain %q", first, tt.contains)
				}
				if !strings.Contains(r.stderr, "\nhint: ") {
					t.Errorf("no hint:\n%s", r.stderr)
				}
				if k := h.env["KIBANA_API_KEY"]; k != "" && strings.Contains(r.stdout+r.stderr, k) {
					t.Error("the API key reached the output")
				}
			}
		})
	}
}

func TestSetupStepsWhenNotConfigured(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.run("discover")
	r.expect(t, ExitUsage)
	// Windows' steps are PowerShell's ($env:, Get-Content … |).
	name := "not-configured"
	if runtime.GOOS == "windows" {
		name += "-windows"
	}
	golden(t, name, r.stderr)
}

// TestAnEmptyVariableIsSaidEmpty: an assistant's config often holds
// "KIBANA_URL": "" to fill in later; the error says the variable is empty,
// not that it is not set, in the CLI, in --json and in doctor.
func TestAnEmptyVariableIsSaidEmpty(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"KIBANA_URL": ""}, "not configured: KIBANA_URL set but empty and KIBANA_API_KEY not set"},
		{map[string]string{"KIBANA_URL": " ", "KIBANA_API_KEY": ""}, "not configured: KIBANA_URL and KIBANA_API_KEY set but empty"},
		{map[string]string{"KIBANA_API_KEY": "\t"}, "not configured: KIBANA_URL not set and KIBANA_API_KEY set but empty"},
		{map[string]string{"KIBANA_URL": "http://127.0.0.1:1", "KIBANA_API_KEY": ""}, "not configured: KIBANA_API_KEY set but empty"},
	} {
		h := newHarness(t, nil)
		maps.Copy(h.env, c.env)
		r := h.run("discover")
		r.expect(t, ExitUsage)
		if first, _, _ := strings.Cut(r.stderr, "\n"); first != "a2a-courier: "+c.want {
			t.Errorf("stderr %q, want %q first", r.stderr, c.want)
		}
		r = h.run("discover", "--json")
		r.expect(t, ExitUsage)
		if e := decodeError(t, r.stdout); e.Code != "not_configured" || e.Message != c.want {
			t.Errorf("%+v, want %q", e, c.want)
		}
		if r = h.run("doctor"); !strings.Contains(r.stdout, "✗ configuration          "+c.want) {
			t.Errorf("doctor:\n%s", r.stdout)
		}
	}
	// Beside a profile: a variable of spaces does not hide the profile's
	// value; one the profile lacks too is said of both.
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	delete(h.env, "KIBANA_URL")
	delete(h.env, "KIBANA_API_KEY")
	path := writeConfig(t, h, "profiles:\n  lab:\n    kibana_url: "+sim.URL+"\n    api_key: "+testKey+"\n  bare:\n    kibana_url: "+sim.URL+"\n", 0o600)
	h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = " ", "\t"
	h.run("discover", "--profile", "lab").expect(t, ExitOK)
	r := h.run("discover", "--profile", "bare")
	checkOneLineError(t, r, ExitUsage, "not configured: KIBANA_API_KEY set but empty; profile bare of "+path+" does not set it either")
	r = h.run("discover")
	checkOneLineError(t, r, ExitUsage, "not configured: KIBANA_URL and KIBANA_API_KEY set but empty; no profile is selected: the config file ("+path+") has 2 profiles")
}

func TestGetCard(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	r := newHarness(t, sim).run("get-card", "elastic-ai-agent")
	r.expect(t, ExitOK)
	golden(t, "get-card", r.stdout)
	r = newHarness(t, sim).run("get-card", "elastic-ai-agent", "--json")
	r.expect(t, ExitOK)
	var card map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &card); err != nil || card["protocolVersion"] != "0.3.0" || card["url"] != testPublicBase+"/api/agent_builder/a2a/elastic-ai-agent" {
		t.Fatalf("%v %s", err, r.stdout)
	}
}

func TestSendSync(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	t.Run("argument", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		r := h.run("send", "elastic-ai-agent", "How many errors?")
		r.expect(t, ExitOK)
		// Before anything leaves, stderr names the task (a caller stopped
		// by its own timeout still has the contextId), and tasks lists it.
		ctxID := startedContext(r.stderr)
		if r.stdout != "Echo: How many errors?\n" || ctxID == "" || afterStarted(r.stderr) != "" {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
		if l := h.run("tasks"); !strings.HasPrefix(l.stdout, ctxID+"\telastic-ai-agent\tcompleted\t") || !strings.HasSuffix(l.stdout, "\tEcho: How many errors?\n") {
			t.Errorf("tasks: %q", l.stdout)
		}
	})
	t.Run("stdin and json", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		h.stdin = "  a question from stdin\n"
		r := h.run("send", "elastic-ai-agent", "--json")
		r.expect(t, ExitOK)
		var doc taskDoc
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err, r.stdout)
		}
		if doc.State != "completed" || doc.Reply == nil || *doc.Reply != "Echo: a question from stdin" || doc.Resume != "" ||
			doc.ConversationID != "a2a-"+doc.ContextID || doc.Agent != "elastic-ai-agent" {
			t.Errorf("doc %+v", doc)
		}
		if sim.Runs(doc.ContextID) != 1 {
			t.Errorf("runs %d", sim.Runs(doc.ContextID))
		}
		// The record keeps the hash and size, not the text.
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		rec, err := st.Load(doc.ContextID)
		if err != nil || rec.State != store.Completed || rec.Message != "" || rec.MessageSize != len("a question from stdin") {
			t.Errorf("record %+v %v", rec, err)
		}
		b, _ := os.ReadFile(filepath.Join(st.TasksDir(), doc.ContextID+".json"))
		if strings.Contains(string(b), `"message":`) || strings.Contains(string(b), testKey) {
			t.Errorf("record holds the text or the key: %s", b)
		}
		// The record was created queued, its text in it until the
		// connection was made (a send killed before then leaves it for a
		// worker to send); the finished record above holds no text.
		audit, _ := os.ReadFile(st.AuditPath())
		if first, _, _ := strings.Cut(string(audit), "\n"); !strings.Contains(first, `"command":"send"`) || !strings.Contains(first, `"state":"queued"`) {
			t.Errorf("first audit line %s", first)
		}
	})
	t.Run("dash reads stdin", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		h.stdin = "dash"
		r := h.run("send", "elastic-ai-agent", "-")
		r.expect(t, ExitOK)
		if r.stdout != "Echo: dash\n" {
			t.Errorf("stdout %q", r.stdout)
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		h.stdin = "caf\xe9"
		r := h.run("send", "elastic-ai-agent")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, "not valid UTF-8") {
			t.Errorf("stderr %q", r.stderr)
		}
	})
}

// TestSendSyncOutcomes: what send prints for each outcome that is not a
// plain reply.
func TestSendSyncOutcomes(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	t.Run("agent fails", func(t *testing.T) {
		t.Parallel()
		r := newHarness(t, sim).run("send", "flaky-agent", "hi")
		r.expect(t, ExitTaskFailed)
		if r.stdout != "" || !strings.Contains(r.stderr, "failed: No complete response received from chat service") {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
		r = newHarness(t, sim).run("send", "flaky-agent", "hi", "--json")
		r.expect(t, ExitTaskFailed)
		var doc taskDoc
		json.Unmarshal([]byte(r.stdout), &doc)
		if doc.State != "failed" || doc.Reply != nil || doc.Error == nil || doc.Error.Code != "task_failed" || doc.Reason == "" {
			t.Errorf("doc %+v", doc)
		}
	})
	t.Run("unknown agent", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		r := h.run("send", "ghost", "hi", "--json")
		r.expect(t, ExitNotFound)
		var doc taskDoc
		json.Unmarshal([]byte(r.stdout), &doc)
		if doc.State != "" || doc.Error == nil || doc.Error.Code != "not_found" {
			t.Errorf("doc %+v", doc)
		}
		// The agent is checked before any task is recorded.
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		if recs, _ := st.List(); len(recs) != 0 {
			t.Errorf("%d records for an agent that does not exist", len(recs))
		}
	})
	t.Run("input required", func(t *testing.T) {
		t.Parallel()
		r := newHarness(t, sim).run("send", "asks", "clean up")
		r.expect(t, ExitInputRequired)
		if r.stdout != "Delete 3 indices?\n" || !strings.Contains(r.stderr, "--context ") {
			t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
	t.Run("max chars", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, sim)
		r := h.run("send", "elastic-ai-agent", strings.Repeat("word ", 50), "--max-chars", "20", "--json")
		r.expect(t, ExitOK)
		var doc taskDoc
		json.Unmarshal([]byte(r.stdout), &doc)
		if !doc.ReplyTruncated || doc.ReplyFile == "" || !strings.HasPrefix(*doc.Reply, "Echo: word word word\n[… reply cut at 20 of") {
			t.Fatalf("doc %+v", doc)
		}
		if p := ownfiletest.FileProblem(doc.ReplyFile); p != "" {
			t.Errorf("reply file: %s", p)
		}
		full, _ := os.ReadFile(doc.ReplyFile)
		if !strings.HasPrefix(string(full), "Echo: word") || len(full) != doc.ReplyChars {
			t.Errorf("reply file holds %d bytes", len(full))
		}
	})
}

func TestSendRecoversAfterProxyCut(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.Faults.ProxyCutAfter = 200 * time.Millisecond })
	h := newHarness(t, sim)
	r := h.run("send", "audit-agent", "30 days", "--poll-interval", "100ms", "--json")
	r.expect(t, ExitOK)
	var doc taskDoc
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.State != "completed" || *doc.Reply != "Report for 30 days: 14 escalations." {
		t.Fatalf("doc %+v", doc)
	}
	if sim.Runs(doc.ContextID) != 1 {
		t.Errorf("runs %d", sim.Runs(doc.ContextID))
	}
	st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	rec, _ := st.Load(doc.ContextID)
	if rec.Via != "conversation" {
		t.Errorf("via %q, want conversation", rec.Via)
	}
}

func TestHelpDocumentsExitCodes(t *testing.T) {
	t.Parallel()
	r := newHarness(t, nil).run("--help")
	r.expect(t, ExitOK)
	for _, want := range []string{"8  still running", "9  server busy", "KIBANA_URL", "send-async"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, cmd := range []string{"discover", "get-card", "send", "send-async", "result", "fetch", "demo", "dev-server"} {
		r := newHarness(t, nil).run(cmd, "--help")
		r.expect(t, ExitOK)
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help has no examples", cmd)
		}
	}
}

// The card's url is shown, never followed: the configured origin gets the
// request and the credential, even when the card names another host.
func TestCardURLIsNeverFollowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer decoy.Close()
	sim := startSim(t, func(o *agentbuildertest.Options) { o.PublicBaseURL = decoy.URL })
	h := newHarness(t, sim)
	r := h.run("get-card", "elastic-ai-agent", "--json")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, decoy.URL) {
		t.Fatalf("the card should name the decoy: %s", r.stdout)
	}
	h.run("send", "elastic-ai-agent", "hi").expect(t, ExitOK)
	h.run("send-async", "elastic-ai-agent", "hi again").expect(t, ExitOK)
	if hits.Load() != 0 {
		t.Errorf("the decoy origin got %d requests", hits.Load())
	}
}

// A generic agent's card that sends requests to another origin is refused
// when a credential is configured.
func TestCredentialStaysWithTheCardsOrigin(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer other.Close()
	cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"name":"Elsewhere","protocolVersion":"0.3.0","url":"`+other.URL+`/a2a","capabilities":{},
			"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}}}`)
	}))
	defer cards.Close()
	h := newHarness(t, nil)
	h.env["A2A_COURIER_TOKEN"] = "tok-should-not-travel"
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = cards.URL
	r := h.run("send", "--url", cards.URL, "hello")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "another origin") || hits.Load() != 0 {
		t.Errorf("stderr %q, %d requests elsewhere", r.stderr, hits.Load())
	}
}

// Sends reuse an agent's card for the max-age Kibana gives it (an hour):
// one request fewer per send. get-card always asks.
func TestSendsReuseTheCard(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	h.run("send", "elastic-ai-agent", "one").expect(t, ExitOK)
	sim.SetFaults(agentbuildertest.Faults{Statuses: []agentbuildertest.StatusFault{{Route: agentbuildertest.RouteCard, Status: 500}}})
	r := h.run("send", "elastic-ai-agent", "two")
	r.expect(t, ExitOK)
	if r.stdout != "Echo: two\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	h.run("get-card", "elastic-ai-agent").expect(t, ExitUnexpected)
	// Another key does not reuse this key's card.
	h.env["KIBANA_API_KEY"] = "bm9zcGFjZTprZXk="
	h.env["KIBANA_SPACE_ID"] = "prod"
	h.run("send", "elastic-ai-agent", "three").expect(t, ExitUnexpected)
}

// The Agent Builder HITL round trip: the agent asks (exit 7, the answer
// command in the document), the answer goes in the same conversation and
// completes.
func TestAnsweringAnAgentBuilderPrompt(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	r := h.run("send", "asks", "clean up old indices", "--json")
	r.expect(t, ExitInputRequired)
	d := decodeTask(t, r.stdout)
	want := `a2a-courier send asks --context ` + d.ContextID + ` --json -`
	if *d.Reply != "Delete 3 indices?" || d.Answer != want {
		t.Fatalf("%+v", d)
	}
	// The placeholder of the text hint, pasted as it is, is refused.
	r = h.run("send", "asks", "--context", d.ContextID, "<your answer>")
	r.expect(t, ExitUsage)
	if sim.Runs(d.ContextID) != 1 || !strings.Contains(r.stderr, "placeholder") {
		t.Fatalf("runs %d, stderr %q", sim.Runs(d.ContextID), r.stderr)
	}
	// The document's command, run as it is, with the answer on stdin.
	r = h.runAnswer(t, d.Answer, "yes, delete them")
	r.expect(t, ExitOK)
	got := decodeTask(t, r.stdout)
	if got.ContextID != d.ContextID || *got.Reply != "Echo: yes, delete them" || sim.Runs(d.ContextID) != 2 {
		t.Fatalf("%+v runs %d", got, sim.Runs(d.ContextID))
	}
	// The first exchange is archived, not lost.
	entries, _ := os.ReadDir(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "archive"))
	if len(entries) != 1 {
		t.Errorf("archive holds %d records", len(entries))
	}
}

// A token goes only to an agent whose card asks for one, at the origin the
// token is bound to; an unbound token is refused with a hint.
func TestTokenGoesOnlyWhereItIsMeant(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	agent := func(security string) *httptest.Server {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				io.WriteString(w, `{"name":"A","protocolVersion":"0.3.0","url":"`+srv.URL+`/","capabilities":{}`+security+`}`)
				return
			}
			seen.Store(r.Header.Get("Authorization"))
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"ok"}]}}`)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	open := agent("")
	secure := agent(`,"securitySchemes":{"b":{"type":"http","scheme":"bearer"}}`)
	h := newHarness(t, nil)
	h.env["A2A_COURIER_TOKEN"] = "tok-for-the-secure-one"
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = open.URL
	h.run("send", "--url", open.URL, "hi").expect(t, ExitOK)
	if v, _ := seen.Load().(string); v != "" {
		t.Errorf("an agent that asks for no credential got %q", v)
	}
	h.run("send", "--url", secure.URL, "hi").expect(t, ExitOK)
	if v, _ := seen.Load().(string); v != "" {
		t.Errorf("a token bound to another origin was sent: %q", v)
	}
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = secure.URL
	h.run("send", "--url", secure.URL, "hi").expect(t, ExitOK)
	if v, _ := seen.Load().(string); v != "Bearer tok-for-the-secure-one" {
		t.Errorf("the bound token was not sent: %q", v)
	}
	delete(h.env, "A2A_COURIER_TOKEN_ORIGIN")
	r := h.run("send", "--url", secure.URL, "hi")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "A2A_COURIER_TOKEN_ORIGIN") {
		t.Errorf("stderr %q", r.stderr)
	}

	// A peer whose token variable is not set: its card is still read
	// (without a credential), a send is refused before anything goes out.
	dir := t.TempDir()
	h.env["A2A_COURIER_CONFIG_DIR"] = dir
	if err := writePrivate(filepath.Join(dir, "config.yaml"), []byte("peers:\n  lab:\n    url: "+secure.URL+"\n    token_env: LAB_TOKEN\n")); err != nil {
		t.Fatal(err)
	}
	seen.Store("none")
	r = h.run("get-card", "lab")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "A") {
		t.Errorf("stdout %q", r.stdout)
	}
	r = h.run("send", "lab", "hi")
	r.expect(t, ExitUsage)
	if v, _ := seen.Load().(string); v != "none" || !strings.Contains(r.stderr, "LAB_TOKEN") {
		t.Errorf("sent %q; stderr %q", v, r.stderr)
	}
}

// TestCtrlCBeforeSending: Ctrl-C while the message has not left (here the
// TLS handshake with the agent hangs) drops the task: nothing ran, and no
// worker sends it later.
func TestCtrlCBeforeSending(t *testing.T) {
	t.Parallel()
	card, connecting := hangingAgent(t)

	h := newHarness(t, nil)
	st, err := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		// Ctrl-C once the task is recorded and its connection is being
		// made: the record still says queued, since nothing has left.
		<-connecting
		if recs, _ := st.List(); len(recs) != 1 || recs[0].State != store.Queued {
			t.Errorf("while connecting: %d records, %+v", len(recs), recs)
		}
		cancel(&signalError{os.Interrupt})
	}()
	r := h.runCtx(ctx, "send", "--url", card.URL, "never mind", "--json")
	r.expect(t, ExitTaskFailed)
	d := decodeTask(t, r.stdout)
	if d.State != "canceled" || !strings.Contains(d.Reason, "nothing ran") {
		t.Fatalf("%+v", d)
	}
	rec, err := st.Load(d.ContextID)
	if err != nil || rec.State != store.Canceled || rec.Message != "" {
		t.Fatalf("record %+v %v", rec, err)
	}
	if st.WorkerRunning(rec.Identity) {
		t.Error("a worker was started for a dropped task")
	}
}

// TestLostTasks: a task the agent can no longer show is reported as lost
// (exit 6, code task_lost, no resume command) at once, not "still running"
// for the caller to wait on for ever; nothing is sent twice.
func TestLostTasks(t *testing.T) {
	t.Parallel()
	agent := func(t *testing.T, send func(w http.ResponseWriter, id string), get func(w http.ResponseWriter, id string)) (*httptest.Server, *atomic.Int32) {
		var sends atomic.Int32
		var sent atomic.Value
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				io.WriteString(w, `{"name":"L","protocolVersion":"0.3.0","url":"`+srv.URL+`/","capabilities":{}}`)
				return
			}
			body, _ := io.ReadAll(r.Body)
			id := gjson.GetBytes(body, "id").Raw
			if c := gjson.GetBytes(body, "params.message.contextId").String(); c != "" {
				sent.Store(c)
			}
			if c, ok := sent.Load().(string); ok {
				w = contextWriter{w, "c", c} // the task is the message's context's
			}
			switch gjson.GetBytes(body, "method").String() {
			case "message/send":
				sends.Add(1)
				send(w, id)
			case "tasks/get":
				get(w, id)
			default:
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			}
		}))
		t.Cleanup(srv.Close)
		return srv, &sends
	}
	check := func(t *testing.T, r result, sends *atomic.Int32) {
		t.Helper()
		r.expect(t, ExitTaskFailed)
		d := decodeTask(t, r.stdout)
		if d.State != "expired" || d.Resume != "" || d.Error == nil || d.Error.Code != "task_lost" || sends.Load() != 1 {
			t.Fatalf("%+v error %+v, %d sends", d, d.Error, sends.Load())
		}
	}
	t.Run("answer lost before the task was named, A2A 0.3", func(t *testing.T) {
		t.Parallel()
		srv, sends := agent(t, func(w http.ResponseWriter, id string) {
			// The request arrived; the answer never comes back.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, func(w http.ResponseWriter, id string) {})
		h := newHarness(t, nil)
		check(t, h.run("send", "--url", srv.URL, "analyse", "--poll-interval", "50ms", "--json"), sends)
	})
	t.Run("the server forgot the task", func(t *testing.T) {
		t.Parallel()
		srv, sends := agent(t, func(w http.ResponseWriter, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c","status":{"state":"working"}}}`)
		}, func(w http.ResponseWriter, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32001,"message":"Task not found"}}`)
		})
		h := newHarness(t, nil)
		r := h.run("send", "--url", srv.URL, "analyse", "--poll-interval", "50ms", "--json")
		check(t, r, sends)
		r = h.run("result", decodeTask(t, r.stdout).ContextID)
		r.expect(t, ExitTaskFailed)
		if !strings.Contains(r.stderr, "is lost") || strings.Contains(r.stderr, "look again") {
			t.Errorf("stderr %q", r.stderr)
		}
	})
	// Any other error reading the task is a failed read: the task is read
	// again, and only the maximum wait ends it, as an ordinary expiry.
	t.Run("a read error that passes", func(t *testing.T) {
		t.Parallel()
		var gets atomic.Int32
		srv, sends := agent(t, func(w http.ResponseWriter, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c","status":{"state":"working"}}}`)
		}, func(w http.ResponseWriter, id string) {
			if gets.Add(1) == 1 {
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32603,"message":"temporary store error"}}`)
				return
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c","status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"m","parts":[{"kind":"text","text":"all done"}]}}}}`)
		})
		h := newHarness(t, nil)
		r := h.run("send", "--url", srv.URL, "analyse", "--poll-interval", "50ms", "--json")
		r.expect(t, ExitOK)
		if d := decodeTask(t, r.stdout); d.State != "completed" || *d.Reply != "all done" || sends.Load() != 1 || gets.Load() != 2 {
			t.Fatalf("%+v, %d sends, %d reads", d, sends.Load(), gets.Load())
		}
	})
	t.Run("a read error that lasts", func(t *testing.T) {
		t.Parallel()
		srv, sends := agent(t, func(w http.ResponseWriter, id string) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"kind":"task","id":"t-1","contextId":"c","status":{"state":"working"}}}`)
		}, func(w http.ResponseWriter, id string) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"invalid params"}}`)
		})
		h := newHarness(t, nil)
		r := h.run("send", "--url", srv.URL, "analyse", "--poll-interval", "50ms", "--max-wait", "400ms", "--json")
		r.expect(t, ExitStillRunning)
		d := decodeTask(t, r.stdout)
		if d.State != "expired" || d.Error != nil || d.Resume != "a2a-courier fetch "+d.ContextID+" --json" || sends.Load() != 1 {
			t.Fatalf("%+v error %+v, %d sends", d, d.Error, sends.Load())
		}
		if rec := loadRecord(t, h, d.ContextID); rec.Lost || rec.LastError == nil || !strings.Contains(rec.LastError.Message, "invalid params") {
			t.Errorf("record %+v, last error %+v", rec, rec.LastError)
		}
	})
}

// TestCancelBeforeSending: a cancel that lands while the message has not
// left (the TLS handshake with the agent hangs) ends the task as "nothing
// ran", not as a run that may still finish.
func TestCancelBeforeSending(t *testing.T) {
	t.Parallel()
	card, connecting := hangingAgent(t)

	h := newHarness(t, nil)
	st, err := store.Open(h.env["A2A_COURIER_STATE_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		// The task is recorded, queued, and its connection is being made.
		<-connecting
		recs, _ := st.List()
		if len(recs) != 1 || recs[0].State != store.Queued {
			t.Errorf("while connecting: %d records, %+v", len(recs), recs)
			done <- result{}
			return
		}
		done <- h.run("cancel", recs[0].ContextID, "--json")
	}()
	r := h.run("send", "--url", card.URL, "never mind", "--timeout", "30s", "--json")
	r.expect(t, ExitTaskFailed)
	d := decodeTask(t, r.stdout)
	if d.State != "canceled" || !strings.Contains(d.Reason, "nothing ran") {
		t.Fatalf("%+v", d)
	}
	c := <-done
	c.expect(t, ExitOK)
	rec, err := st.Load(d.ContextID)
	if err != nil || rec.State != store.Canceled || rec.SentAt != nil || !strings.Contains(rec.Reason, "nothing ran") {
		t.Fatalf("record %+v %v", rec, err)
	}
}

// TestCanceledHints: the hint of a canceled task follows how it was
// canceled, not its reason's wording.
func TestCanceledHints(t *testing.T) {
	t.Parallel()
	sent := time.Now()
	for _, c := range []struct {
		name string
		rec  store.Record
		want string
	}{
		{"stopped by the server", store.Record{Target: store.Target{Kind: "kibana"}, SentAt: &sent, Reason: "the run was aborted"}, "the agent stopped the run"},
		{"a generic agent canceled it", store.Record{Target: store.Target{Kind: "a2a"}, SentAt: &sent}, "the agent stopped the run"},
		{"cancel before sending", store.Record{Target: store.Target{Kind: "kibana"}, MessageID: "m1", CanceledBy: "cancel"}, "nothing was sent"},
		{"Ctrl-C before sending", store.Record{Target: store.Target{Kind: "a2a"}, MessageID: "m1", CanceledBy: "interrupt"}, "nothing was sent"},
		{"cancel by task id alone", store.Record{Target: store.Target{Kind: "a2a"}, CanceledBy: "cancel"}, "canceled on request"},
		{"a record from before canceled_by", store.Record{Target: store.Target{Kind: "kibana"}, SentAt: &sent, Reason: "canceled on request; Agent Builder cannot stop a run"}, "may still finish"},
		{"cancel of a running Kibana task", store.Record{Target: store.Target{Kind: "kibana"}, SentAt: &sent, CanceledBy: "cancel"}, "may still finish"},
		{"cancel of a running generic task", store.Record{Target: store.Target{Kind: "a2a"}, SentAt: &sent, CanceledBy: "cancel"}, "canceled on request"},
	} {
		c.rec.ContextID, c.rec.State = "c1", store.Canceled
		if ce := recordError(&c.rec); !strings.Contains(ce.hint.String(), c.want) || ce.exit != ExitTaskFailed {
			t.Errorf("%s: exit %d, hint %q, want %q", c.name, ce.exit, ce.hint, c.want)
		}
	}
}

// A command that only groups others prints its help alone, but with --json
// stdout is one JSON document or nothing: a usage error listing the
// subcommands.
func TestGroupCommandsWithJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--json"}, "a command is needed: one of cancel, completion, config,"},
		{[]string{"config", "--json"}, "config needs a subcommand: one of path, set, show, unset"},
		{[]string{"--json", "skill"}, "skill needs a subcommand: one of install, show"},
		{[]string{"completion", "--json"}, "completion needs a subcommand: one of bash, fish, powershell, zsh"},
	} {
		r := newHarness(t, nil).run(tc.args...)
		r.expect(t, ExitUsage)
		var doc struct {
			Error errorDoc `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Error.Code != "usage" ||
			!strings.HasPrefix(doc.Error.Message, tc.want) || doc.Error.Hint == "" || r.stderr != "" {
			t.Errorf("%v: %v; stdout %q stderr %q", tc.args, err, r.stdout, r.stderr)
		}
		// Without --json, the help, exit 0.
		plain := newHarness(t, nil).run(slicesDelete(tc.args, "--json")...)
		plain.expect(t, ExitOK)
		if !strings.Contains(plain.stdout, "Usage:") {
			t.Errorf("%v without --json: stdout %q", tc.args, plain.stdout)
		}
	}
}

func slicesDelete(args []string, drop string) []string {
	var out []string
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

// Flag and command mistakes: the hint names the command's own help, a
// near command is suggested, and a flag that would carry a secret says
// where the secret goes instead, never repeating the value.
func TestUsageMistakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args           []string
		message, hint  string
		notInAnyOutput string
	}{
		{[]string{"send", "--bogus"}, "unknown flag: --bogus", "run `a2a-courier send --help` for its flags", ""},
		{[]string{"config", "show", "--bogus"}, "unknown flag: --bogus", "run `a2a-courier config show --help` for its flags", ""},
		{[]string{"sned"}, `unknown command "sned" for "a2a-courier"`, "did you mean `a2a-courier send`? run `a2a-courier --help` for the commands and flags", ""},
		{[]string{"config", "shwo"}, `config has no subcommand "shwo"`, "did you mean `a2a-courier config show`? run `a2a-courier config --help`", ""},
		{[]string{"completion", "bsh"}, `unknown completion subcommand "bsh"`, "did you mean `a2a-courier completion bash`?", ""},
		{[]string{"discover", "--api-key", "c2VjcmV0OnZhbHVl"}, "--api-key: the API key is never a flag value", "set KIBANA_API_KEY, give --api-key-file <file>", "c2VjcmV0OnZhbHVl"},
		{[]string{"send", "elastic-ai-agent", "hi", "--api-key=c2VjcmV0OnZhbHVl"}, "--api-key: the API key is never a flag value", shellcmd.Native.FromFile("a2a-courier config set api-key", "key-file"), "c2VjcmV0OnZhbHVl"},
		{[]string{"discover", "--key", "s3cr3t"}, "--key: the API key is never a flag value", "KIBANA_API_KEY", "s3cr3t"},
		{[]string{"send", "--url", "https://agent.example", "hi", "--token", "s3cr3t"}, "--token: a token is never a flag value", "give --token-file <file>", "s3cr3t"},
		{[]string{"get-card", "x", "--bearer-token=s3cr3t"}, "--bearer-token: a token is never a flag value", "A2A_COURIER_TOKEN", "s3cr3t"},
	} {
		for _, jsonMode := range []bool{false, true} {
			args := tc.args
			if jsonMode {
				args = append([]string{"--json"}, args...)
			}
			r := newHarness(t, nil).run(args...)
			r.expect(t, ExitUsage)
			if tc.notInAnyOutput != "" && strings.Contains(r.stdout+r.stderr, tc.notInAnyOutput) {
				t.Errorf("%v: the value was echoed: %q %q", args, r.stdout, r.stderr)
			}
			if jsonMode {
				var doc struct {
					Error errorDoc `json:"error"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !strings.HasPrefix(doc.Error.Message, tc.message) ||
					!strings.Contains(doc.Error.Hint, tc.hint) {
					t.Errorf("%v: %v %+v", args, err, doc.Error)
				}
				continue
			}
			if !strings.HasPrefix(r.stderr, "a2a-courier: "+tc.message) || !strings.Contains(r.stderr, "\nhint: ") ||
				!strings.Contains(r.stderr[strings.Index(r.stderr, "\nhint: "):], tc.hint) || r.stdout != "" {
				t.Errorf("%v: stdout %q stderr %q", args, r.stdout, r.stderr)
			}
		}
	}
}

// Every example of --help can be pasted: no elided ids ("3f6c…"), ids that
// look like UUIDs are UUIDs, and a shell variable is set by an earlier line
// of the same examples.
func TestHelpExamplesCanBePasted(t *testing.T) {
	t.Parallel()
	uuidLike := regexp.MustCompile(`\b[0-9a-f]{4,8}-[0-9a-z…-]*`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if strings.Contains(c.Example, "…") {
			t.Errorf("%s: an example elides something: %q", c.CommandPath(), c.Example)
		}
		for _, id := range uuidLike.FindAllString(c.Example, -1) {
			if _, err := uuid.Parse(id); err != nil {
				t.Errorf("%s: %q is not a whole UUID", c.CommandPath(), id)
			}
		}
		set := map[string]bool{}
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			for _, m := range regexp.MustCompile(`\$([a-z_]+)`).FindAllStringSubmatch(line, -1) {
				if !set[m[1]] {
					t.Errorf("%s: $%s is used before an example line sets it: %q", c.CommandPath(), m[1], line)
				}
			}
			if name, _, ok := strings.Cut(line, "="); ok && regexp.MustCompile(`^[a-z_]+$`).MatchString(name) {
				set[name] = true
			}
		}
	}
	walk(RootCommand())
}

// Help says what each command does, in lines a terminal of 80 columns
// shows whole.
func TestHelpText(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return // cobra's text
		}
		for _, l := range strings.Split(c.Long, "\n") {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("%s: a help line of %d columns: %q", c.CommandPath(), n, l)
			}
		}
	}
	walk(RootCommand())

	help := func(args ...string) string {
		r := newHarness(t, nil).run(append(args, "--help")...)
		r.expect(t, ExitOK)
		return r.stdout
	}
	for _, cmd := range [][]string{{"get-card"}, {"cancel"}, {"fetch"}} {
		if out := help(cmd...); strings.Contains(out, "--no-stream") {
			t.Errorf("%s --help lists --no-stream, which means nothing there", cmd[0])
		}
	}
	for _, cmd := range []string{"send", "send-async"} {
		if out := help(cmd); !strings.Contains(out, "--no-stream") {
			t.Errorf("%s --help lacks --no-stream", cmd)
		}
	}
	// get-card and cancel still take it: scripts may pass it everywhere.
	if r := newHarness(t, nil).run("get-card", "--no-stream", "--url", "127.0.0.1:1"); strings.Contains(r.stderr, "unknown flag") {
		t.Errorf("get-card --no-stream: %s", r.stderr)
	}
	if out := help("send-async"); strings.Contains(out, "send's --timeout") || !strings.Contains(out, "the worker sends it again") {
		t.Errorf("send-async --help is not its own:\n%s", out)
	}
	if out := help("cancel"); !strings.Contains(out, "Agent Builder cannot stop a run") || strings.Contains(out, "9.2 to 9.5 offers") {
		t.Errorf("cancel --help:\n%s", out)
	}
	if out := help("discover"); !strings.Contains(out, `{"agents":[{"id","name","description","kind"}]}`) || !strings.Contains(out, `"url"`) {
		t.Errorf("discover --help does not show the document it prints:\n%s", out)
	}
}

// hangingAgent serves a card whose endpoint takes connections and never
// answers the TLS handshake: a request to it cannot have left.
func hangingAgent(t *testing.T) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	card := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"name":"H","protocolVersion":"0.3.0","url":"https://`+ln.Addr().String()+`/","capabilities":{}}`)
	}))
	t.Cleanup(card.Close)
	return card, accepted
}

// TestReleaseBuildHasNoSimulator: without a simulator (the release build),
// demo and dev-server keep their names and help, and say how to get one.
func TestReleaseBuildHasNoSimulator(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"demo", "dev-server"} {
		var out, errb strings.Builder
		code := Run(context.Background(), &Process{Args: []string{command}, Stdout: &out, Stderr: &errb})
		if code != ExitUsage || out.String() != "" || !strings.Contains(errb.String(), "leaves out") ||
			!strings.Contains(errb.String(), "go run -tags simulator ./cmd/a2a-courier "+command) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", command, code, out.String(), errb.String())
		}
		out.Reset()
		if code := Run(context.Background(), &Process{Args: []string{command, "--help"}, Stdout: &out}); code != ExitOK || !strings.Contains(out.String(), "simulator") {
			t.Errorf("%s --help: exit %d, %q", command, code, out.String())
		}
	}
}

// TestInvokedCommand: the command a command line runs is told before the
// flags are parsed, so that only it is built; anything else builds the
// whole tree.
func TestInvokedCommand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "version"},
		{[]string{"--json", "send", "agent", "hi"}, "send"},
		{[]string{"--profile", "send", "result", "x"}, "result"}, // a flag's value is not the command
		{[]string{"--profile=prod", "config", "show"}, "config"},
		{[]string{"--space", "s", "--kibana-url", "u", "--api-key-file", "f", "--token-file", "t", "fetch", "x"}, "fetch"},
		{[]string{"help", "send"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"sned", "x"}, ""}, // unknown: the whole tree suggests the nearest
		{[]string{"--version"}, ""},
		{[]string{"--", "send"}, ""},
		{nil, ""},
	} {
		if got := invokedCommand(tt.args); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestFollowUpNeedsItsConversation: send --context continues a
// conversation; a contextId Kibana has no conversation of (a typo, the
// conversation's own a2a- id) or one another agent holds is refused
// before anything is recorded or sent, instead of starting a new, empty
// conversation or adding a round to the other agent's.
func TestFollowUpNeedsItsConversation(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	r := h.run("send", "audit-agent", "first", "--json")
	r.expect(t, ExitOK)
	ctxID := decodeTask(t, r.stdout).ContextID
	runs := sim.TotalRuns()
	for _, tc := range []struct {
		name, agent, context string
		exit                 int
		code, message, hint  string
	}{
		{"a typo", "audit-agent", "3f0e5c1a-0000-4000-8000-000000000000", ExitNotFound, "not_found",
			"Kibana has no conversation a2a-3f0e5c1a-0000-4000-8000-000000000000 to continue", "`a2a-courier history` lists the conversations"},
		{"the conversation id", "audit-agent", "a2a-" + ctxID, ExitNotFound, "not_found",
			"Kibana has no conversation a2a-a2a-" + ctxID, "that is a conversation id: its contextId is " + ctxID + " (--context " + ctxID + ")"},
		{"another agent's", "elastic-ai-agent", ctxID, ExitUsage, "usage",
			"the conversation of context " + ctxID + " is with agent audit-agent, not elastic-ai-agent; nothing was sent", "`a2a-courier send audit-agent --context " + ctxID + "` goes on with that conversation"},
	} {
		r := h.run("send", tc.agent, "--context", tc.context, "and then?", "--json")
		r.expect(t, tc.exit)
		var doc struct{ Error errorDoc }
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Error.Code != tc.code ||
			!strings.Contains(doc.Error.Message, tc.message) || !strings.Contains(doc.Error.Hint, tc.hint) {
			t.Errorf("%s: %v %s", tc.name, err, r.stdout)
		}
	}
	if n := sim.TotalRuns(); n != runs {
		t.Errorf("%d runs, want %d: a refused follow-up was sent", n, runs)
	}
	if recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json")); len(recs) != 1 {
		t.Errorf("records %v, want the first task's only", recs)
	}
	// result of the conversation's id names the contextId.
	r = h.run("result", "a2a-"+ctxID)
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "that is a conversation id: its contextId is "+ctxID+" (a2a-courier result "+ctxID+")") {
		t.Errorf("result of the conversation id: %s", r.stderr)
	}
	r = h.run("cancel", "a2a-"+ctxID)
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "that is a conversation id: its contextId is "+ctxID+" (a2a-courier cancel "+ctxID+")") {
		t.Errorf("cancel of the conversation id: %s", r.stderr)
	}
	r = h.run("send", "audit-agent", "--context", "nonsense", "and then?")
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "contextIds made by a2a-courier (and by Kibana) are UUIDs") {
		t.Errorf("send --context nonsense: %s", r.stderr)
	}
	// The real follow-up goes on.
	r = h.run("send", "audit-agent", "--context", ctxID, "and then?")
	r.expect(t, ExitOK)
}

// TestCtrlCAfterTheMessageLeft: Ctrl-C once the message has left hands the
// task to a worker (exit 8, nothing lost) and says how to stop it instead.
func TestCtrlCAfterTheMessageLeft(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "slow", Name: "Slow", Reply: "late", RunTime: 2 * time.Second})
	})
	h := newHarness(t, sim)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		st, _ := store.Open(h.env["A2A_COURIER_STATE_DIR"])
		for ctx.Err() == nil {
			if recs, _ := st.List(); len(recs) == 1 && recs[0].State == store.Working {
				cancel(&signalError{os.Interrupt})
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	r := h.runCtx(ctx, "send", "slow", "take your time")
	r.expect(t, ExitStillRunning)
	recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %v", recs)
	}
	ctxID := strings.TrimSuffix(filepath.Base(recs[0]), ".json")
	if !strings.Contains(r.stderr, "to cancel it instead: a2a-courier cancel "+ctxID+" (it says whether the agent can stop the run)") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = h.run("result", ctxID, "--wait", "--timeout", "30s")
	r.expect(t, ExitOK)
	if r.stdout != "late\n" || sim.Runs(ctxID) != 1 {
		t.Errorf("stdout %q, %d runs", r.stdout, sim.Runs(ctxID))
	}
}

// TestFollowUpStaysWithItsAgent: a context this machine holds for a
// generic agent is not continued with a Kibana agent, nor a Kibana one
// with a generic agent (the follow-up would take the other's record over,
// and neither agent would continue the conversation meant); nothing is
// sent. On a terminal the hint to continue names the generic agent by its
// URL.
func TestFollowUpStaysWithItsAgent(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	js := interoptest.StartJS(t)
	echo := js.URL(interoptest.MountV1, interoptest.AgentEcho)
	h := newHarness(t, sim)
	h.errTTY = true
	r := h.run("send", "--url", echo, "hello")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "(continue with: a2a-courier send --url "+echo+" --context ") {
		t.Errorf("the hint to continue: %q", r.stderr)
	}
	h.errTTY = false
	r = h.run("send", "--url", echo, "hello again", "--json")
	r.expect(t, ExitOK)
	generic := decodeTask(t, r.stdout).ContextID
	r = h.run("send", "audit-agent", "first", "--json")
	r.expect(t, ExitOK)
	kibana := decodeTask(t, r.stdout).ContextID
	runs := sim.TotalRuns()
	for _, args := range [][]string{
		{"send", "audit-agent", "--context", generic, "cross", "--json"},
		{"send-async", "--url", echo, "--context", kibana, "cross", "--json"},
	} {
		r := h.run(args...)
		r.expect(t, ExitUsage)
		var doc struct{ Error errorDoc }
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !strings.Contains(doc.Error.Message, "nothing was sent") ||
			!strings.Contains(doc.Error.Hint, "goes on with that conversation") {
			t.Errorf("%v: %v %s", args, err, r.stdout)
		}
	}
	if n := sim.TotalRuns(); n != runs {
		t.Errorf("%d runs on Kibana, want %d", n, runs)
	}
	// The same agent of another Kibana (or space) does not take it over.
	other := startSim(t, nil)
	o := newHarness(t, other)
	o.env["A2A_COURIER_STATE_DIR"] = h.env["A2A_COURIER_STATE_DIR"]
	r = o.run("send", "audit-agent", "--context", kibana, "elsewhere")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "is this machine's task with agent audit-agent at "+sim.URL+", another server; nothing was sent") ||
		!strings.Contains(r.stderr, "`a2a-courier send audit-agent --context "+kibana+" --kibana-url "+sim.URL+" --space default` goes on") || other.TotalRuns() != 0 {
		t.Errorf("another Kibana: %d runs, %s", other.TotalRuns(), r.stderr)
	}
	// The caller's own connection flags are for its Kibana, not the one
	// the hint names: none of them is added to it.
	keyFile := filepath.Join(t.TempDir(), "key")
	writePrivate(keyFile, []byte(testKey))
	r = o.run("--api-key-file", keyFile, "--kibana-url", other.URL, "send", "audit-agent", "--context", kibana, "elsewhere")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "`a2a-courier send audit-agent --context "+kibana+" --kibana-url "+sim.URL+" --space default` goes on") {
		t.Errorf("another Kibana, with the caller's flags: %s", r.stderr)
	}
	// The same Kibana spelled with a trailing slash is the same server:
	// the follow-up goes on.
	same := newHarness(t, sim)
	same.env["A2A_COURIER_STATE_DIR"] = h.env["A2A_COURIER_STATE_DIR"]
	same.env["KIBANA_URL"] = sim.URL + "/"
	if r := same.run("send", "audit-agent", "--context", kibana, "spelled another way"); r.code != ExitOK {
		t.Errorf("the same Kibana with a trailing slash: %d %s", r.code, r.stderr)
	}
	// An answer to a generic agent's task (--task) in a context this
	// machine holds for Kibana is refused too.
	r = h.run("send", "--url", echo, "--task", "t-1", "--context", kibana, "cross", "--json")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stdout, "nothing was sent") {
		t.Errorf("--task into a Kibana context: %s", r.stdout)
	}
	// The same agent goes on with its own context.
	if r := h.run("send", "--url", echo, "--context", generic, "and more"); r.code != ExitOK || r.stdout != "echo: and more\n" {
		t.Errorf("a follow-up to the same agent: %d %q %q", r.code, r.stdout, r.stderr)
	}
	for ctxID, agent := range map[string]string{generic: "echo", kibana: "audit-agent"} {
		if rec := loadRecord(t, h, ctxID); rec.Agent != agent || rec.State != "completed" {
			t.Errorf("record of %s: agent %q, state %s", ctxID, rec.Agent, rec.State)
		}
	}
}

// --protocol and --binding an Agent Builder agent cannot be spoken to in
// are refused before anything is sent (exit 2), and so is a value no agent
// takes; Kibana's own, 0.3 over JSON-RPC, passes.
func TestKibanaAgentRefusesOtherBindings(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--binding", "grpc"}, "gRPC is not supported"},
		{[]string{"--binding", "bogus"}, `unknown A2A binding "bogus"`},
		{[]string{"--protocol", "2.0"}, `unknown protocol "2.0"`},
		{[]string{"--binding", "rest"}, "speaks A2A 0.3 over JSON-RPC only, not HTTP+JSON"},
		{[]string{"--protocol", "1.0", "--binding", "rest"}, "not A2A 1.0 over HTTP+JSON"},
	} {
		for _, cmd := range []string{"send", "send-async"} {
			r := h.run(append([]string{cmd, "elastic-ai-agent", "hi"}, c.args...)...)
			r.expect(t, ExitUsage)
			if !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "hint: ") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 1 {
				t.Errorf("%s %v: %q", cmd, c.args, r.stderr)
			}
		}
	}
	if n := sim.TotalRuns(); n != 0 {
		t.Fatalf("%d runs", n)
	}
	if r := h.run("tasks", "--json"); !strings.Contains(r.stdout, `"tasks": []`) {
		t.Fatalf("records were written: %s", r.stdout)
	}
	h.run("send", "elastic-ai-agent", "hi", "--protocol", "0.3", "--binding", "jsonrpc").expect(t, ExitOK)
}
