package cli

import (
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/proctest"
)

// leakChecker collects everything a secret must never reach.
type leakChecker struct {
	t       *testing.T
	secrets []string
}

func (l *leakChecker) check(where, text string) {
	l.t.Helper()
	for _, s := range l.secrets {
		if strings.Contains(text, s) {
			l.t.Errorf("the secret %q reached %s", s[:6]+"…", where)
		}
	}
}

func (l *leakChecker) checkDir(dir string) {
	l.t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		l.check(path, string(b))
		return nil
	})
}

func (l *leakChecker) checkWorkers(stateDir string) int {
	l.t.Helper()
	pids := workerPIDs(l.t, stateDir)
	for _, pid := range pids {
		for what, read := range map[string]func(int) (string, error){"command line": proctest.CommandLine, "environment": proctest.Environment} {
			text, err := read(pid)
			if err != nil && proctest.Alive(pid) {
				l.t.Errorf("the worker's %s: %v", what, err)
			}
			l.check(fmt.Sprintf("worker %d's %s", pid, what), text)
		}
	}
	return len(pids)
}

// TestSecretsNeverLeak runs every command with a sentinel API key and looks
// for it in stdout, stderr, the state directory (records, logs, audit log,
// saved replies), the config directory and the worker's argv and
// environment.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	const sentinel = "SENTINEL-4f1d9c:do-not-leak-7b2e"
	key := base64.StdEncoding.EncodeToString([]byte(sentinel))
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Keys = append(o.Keys, agentbuildertest.Key{APIKey: key, Username: "sentinel"})
		o.Agents[1].RunTime = 1500 * time.Millisecond
	})
	p := newProc(t, sim)
	p.env["KIBANA_API_KEY"] = key
	p.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
	defer p.waitWorkersExit()
	l := &leakChecker{t: t, secrets: []string{key, sentinel, "do-not-leak-7b2e", "ApiKey " + key}}
	var outputs []result
	run := func(args ...string) result {
		r := p.run(args...)
		outputs = append(outputs, r)
		return r
	}

	run("discover")
	run("discover", "--json")
	run("get-card", "audit-agent", "--json")
	r := run("send", "elastic-ai-agent", "hello", "--json")
	ctxID := decodeTask(t, r.stdout).ContextID
	r = run("send-async", "audit-agent", "long one", "--poll-interval", "200ms")
	asyncID := strings.TrimSpace(r.stdout)
	time.Sleep(300 * time.Millisecond)
	if n := l.checkWorkers(p.env["A2A_COURIER_STATE_DIR"]); n == 0 {
		t.Error("no worker to look at")
	}
	run("result", asyncID, "--wait", "--timeout", "30s", "--json")
	run("fetch", ctxID, "--json", "--max-chars", "5")
	run("history", "--json")
	run("show", ctxID)
	run("doctor", "--json")
	run("config", "show")
	run("config", "show", "--json")
	run("version", "--json")
	run("send", "ghost", "x")
	run("send", "flaky-agent", "x", "--json")
	r = run("send-async", "audit-agent", "to cancel", "--poll-interval", "200ms")
	run("cancel", strings.TrimSpace(r.stdout), "--json")
	// The key from a file, too.
	keyFile := filepath.Join(t.TempDir(), "key")
	writePrivate(keyFile, []byte(key))
	delete(p.env, "KIBANA_API_KEY")
	run("send", "elastic-ai-agent", "from a key file", "--api-key-file", keyFile)
	// And a wrong key, whose refusal must not echo it.
	p.env["KIBANA_API_KEY"] = key + "x"
	run("discover")

	for i, o := range outputs {
		l.check(fmt.Sprintf("stdout of command %d", i), o.stdout)
		l.check(fmt.Sprintf("stderr of command %d", i), o.stderr)
	}
	p.waitWorkersExit()
	l.checkDir(p.env["A2A_COURIER_STATE_DIR"])
	l.checkDir(p.env["A2A_COURIER_CONFIG_DIR"])
	audit, err := os.ReadFile(filepath.Join(p.env["A2A_COURIER_STATE_DIR"], "audit.log"))
	if err != nil || !strings.Contains(string(audit), `"command":"send"`) {
		t.Errorf("audit log: %v", err)
	}
	if strings.Contains(string(audit), "hello") || strings.Contains(string(audit), "Echo:") {
		t.Error("the audit log holds message or reply text")
	}
}

// TestTokenNeverLeaks does the same for a generic agent's bearer token.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	srv := interoptest.StartGo(t)
	h := newHarness(t, nil)
	h.env["A2A_COURIER_TOKEN"] = srv.Token
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = srv.Origin
	l := &leakChecker{t: t, secrets: []string{srv.Token, "Bearer " + srv.Token}}
	url := srv.URL(interoptest.MountGo, interoptest.AgentSecure)
	for _, args := range [][]string{
		{"get-card", "--url", url, "--json"},
		{"send", "--url", url, "hello", "--json"},
		{"send-async", "--url", url, "hello again"},
	} {
		r := h.run(args...)
		l.check("stdout", r.stdout)
		l.check("stderr", r.stderr)
		if args[0] == "send-async" {
			l.checkWorkers(h.env["A2A_COURIER_STATE_DIR"])
			r = h.run("result", strings.TrimSpace(r.stdout), "--wait", "--timeout", "30s")
			r.expect(t, ExitOK)
			l.check("result", r.stdout+r.stderr)
		}
	}
	waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
	l.checkDir(h.env["A2A_COURIER_STATE_DIR"])
}

// TestIDsCannotEscape gives every command that takes an id hostile ones.
func TestIDsCannotEscape(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, sim)
	outside := filepath.Join(filepath.Dir(h.env["A2A_COURIER_STATE_DIR"]), "escaped")
	for _, id := range []string{"../escaped", "../../etc/passwd", "/etc/passwd", "a/b", "a%2Fb", "..", ".hidden", "a\x00b", "a b", "a?b=c", "a#b"} {
		for _, args := range [][]string{
			{"result", id}, {"fetch", id}, {"show", id}, {"cancel", id},
			{"send", "elastic-ai-agent", "x", "--context", id}, {"get-card", id},
		} {
			r := h.run(args...)
			if r.code != ExitUsage {
				t.Errorf("%q: exit %d, want 2\n%s", args, r.code, r.stderr)
			}
		}
	}
	// Ids too long for the files named after them (and for "a2a-<id>").
	for _, n := range []int{201, 251, 255, 300} {
		id := strings.Repeat("b", n)
		for _, args := range [][]string{
			{"result", id}, {"fetch", id}, {"send", "elastic-ai-agent", "x", "--context", id},
		} {
			r := h.run(append(args, "--json")...)
			if r.code != ExitUsage || !strings.Contains(r.stdout, `"usage"`) {
				t.Errorf("%s of a %d-character id: exit %d, want 2 (usage)\n%s", args[0], n, r.code, r.stdout)
			}
		}
		// cancel also takes an agent's task id, which may be up to 255
		// long: not a local record, so not found; longer is usage.
		want := ExitNotFound
		if n > 255 {
			want = ExitUsage
		}
		if r := h.run("cancel", id, "--json"); r.code != want {
			t.Errorf("cancel of a %d-character id: exit %d, want %d\n%s", n, r.code, want, r.stdout)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a file was written outside the state directory")
	}
	if sim.TotalRuns() != 0 {
		t.Errorf("%d runs for hostile ids", sim.TotalRuns())
	}
}

// TestEchoedKeyIsRedacted: a server (or a proxy in front of it) that
// echoes the credential in an error body gets it back as [redacted] in
// every form a user may have configured or a server may print: encoded,
// without padding, URL-safe, the decoded id:key pair and its key half.
func TestEchoedKeyIsRedacted(t *testing.T) {
	t.Parallel()
	const pair = "VuaCfGcBCdbkQm-e5aOx:ui2lp2axTNmsyakw9tvNnw"
	encoded := base64.StdEncoding.EncodeToString([]byte(pair))
	forms := []string{encoded, strings.TrimRight(encoded, "="), pair, "ui2lp2axTNmsyakw9tvNnw",
		strings.NewReplacer("+", "-", "/", "_").Replace(strings.TrimRight(encoded, "="))}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"statusCode":400,"error":"Bad Request","message":"bad key %s"}`, strings.Join(forms, " / "))
	}))
	t.Cleanup(srv.Close)
	l := &leakChecker{t: t, secrets: forms}
	for _, configured := range []string{pair, encoded, "ApiKey " + encoded} {
		h := newHarness(t, nil)
		h.env["KIBANA_URL"] = srv.URL
		h.env["KIBANA_API_KEY"] = configured
		for _, args := range [][]string{{"discover"}, {"discover", "--json"}, {"send", "elastic-ai-agent", "hi", "--json"}} {
			r := h.run(args...)
			if r.code == ExitOK {
				t.Fatalf("%v succeeded against a server that refuses everything", args)
			}
			if !strings.Contains(r.stdout+r.stderr, "[redacted]") {
				t.Errorf("%v: the echoed key is not shown as [redacted]: %s%s", args, r.stdout, r.stderr)
			}
			l.check(fmt.Sprintf("the output of %v with the key configured as %.7s…", args, configured), r.stdout+r.stderr)
		}
	}
}

// TestEchoedTokenInAReplyIsRedacted: an agent whose reply repeats the
// credential it was sent (a buggy or hostile agent) does not get it onto
// the screen or into the task record.
func TestEchoedTokenInAReplyIsRedacted(t *testing.T) {
	t.Parallel()
	const token = "tok-ECHOED-4c1e9b7a"
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":"Echo","protocolVersion":"0.3.0","url":%q,"capabilities":{},
				"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}},"security":[{"bearer":[]}]}`, srv.URL+"/")
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		ctxID := gjson.GetBytes(body, "params.message.contextId").String()
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"message","role":"agent","messageId":"m1","contextId":%q,
			"parts":[{"kind":"text","text":"you sent %s, and the token alone is %s"}]}}`, id, ctxID, r.Header.Get("Authorization"), token)
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, nil)
	h.env["A2A_COURIER_TOKEN"] = token
	h.env["A2A_COURIER_TOKEN_ORIGIN"] = srv.URL
	r := h.run("send", "--url", srv.URL, "who am I?", "--json")
	r.expect(t, ExitOK)
	d := decodeTask(t, r.stdout)
	if d.Reply == nil || !strings.Contains(*d.Reply, "[redacted]") {
		t.Fatalf("%s", r.stdout)
	}
	l := &leakChecker{t: t, secrets: []string{token}}
	l.check("stdout", r.stdout)
	l.check("stderr", r.stderr)
	l.checkDir(h.env["A2A_COURIER_STATE_DIR"])
}

// TestURLPasswordsNeverEcho: a URL given with a user name and password
// (refused: Kibana takes an API key) never has its password repeated, in
// any of the messages that quote a URL, whatever characters it holds.
func TestURLPasswordsNeverEcho(t *testing.T) {
	t.Parallel()
	const pw = "hun/ter?2#pw"
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"KIBANA_URL": "elastic:" + pw + "@10.0.0.1:5601"}, []string{"discover"}},
		{map[string]string{"KIBANA_URL": "https://elastic:" + pw + "@kb.example.com"}, []string{"discover"}},
		{map[string]string{"KIBANA_URL": "https://elastic:hunter2pw@kb.example.com:notaport"}, []string{"discover"}},
		{map[string]string{"KIBANA_URL": "https://kb1.example.com"}, []string{"discover", "--kibana-url", "https://elastic:" + pw + "@kb2.example.com"}},
		{map[string]string{"KIBANA_URL": "https://elastic:" + pw + "@kb.example.com"}, []string{"config", "show"}},
		{map[string]string{"KIBANA_URL": "https://elastic:" + pw + "@kb.example.com"}, []string{"doctor"}},
		{nil, []string{"get-card", "--url", "https://elastic:" + pw + "@agents.example.com/a"}},
		{nil, []string{"get-card", "--url", "elastic:" + pw + "@agents.example.com"}},
		// Passwords that read as a port and a path: the URL parses without a user.
		{map[string]string{"KIBANA_URL": "https://elastic:1234/Secretpw@kb.example.com"}, []string{"config", "show"}},
		{map[string]string{"KIBANA_URL": "https://elastic:1234/Secretpw@kb.example.com"}, []string{"discover"}},
		{nil, []string{"get-card", "--url", "https://elastic:1234/Secretpw@agents.example.com/a"}},
		{nil, []string{"send", "--url", "https://elastic:/Secretpw@agents.example.com/a", "hi"}},
		{map[string]string{"KIBANA_URL": "elastic:Secretpw@kb.example.com/?r=https://x"}, []string{"discover"}},
	} {
		h := newHarness(t, nil)
		h.env["KIBANA_API_KEY"] = testKey
		for k, v := range c.env {
			h.env[k] = v
		}
		for _, jsonMode := range []bool{false, true} {
			args := c.args
			if jsonMode {
				args = append(append([]string{}, args...), "--json")
			}
			r := h.run(args...)
			for _, part := range []string{pw, "hunter2pw", "hun/", "ter?2", "2#pw", ":hun", "Secretpw"} {
				if strings.Contains(r.stdout+r.stderr, part) {
					t.Errorf("%v with %v: %q reached the output:\n%s%s", args, c.env, part, r.stdout, r.stderr)
				}
			}
		}
	}
}

// TestGluedShorthandValueIsNotRepeated: "-pSecret" is an unknown shorthand
// followed by what may be a secret; the error names the flag only.
func TestGluedShorthandValueIsNotRepeated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, json := range []bool{false, true} {
		for _, bad := range []string{"-pSUPERSECRET", "---api-key=SUPERSECRET"} {
			args := []string{"discover", bad}
			if json {
				args = append(args, "--json")
			}
			r := h.run(args...)
			r.expect(t, ExitUsage)
			if strings.Contains(r.stdout+r.stderr, "SUPERSECRET") {
				t.Errorf("the value was repeated: %s%s", r.stdout, r.stderr)
			}
		}
	}
}

// TestEchoedKeyInAnAgentFailureIsRedacted: a failing agent whose reason
// repeats the key does not get it into the task record or the audit log.
func TestEchoedKeyInAnAgentFailureIsRedacted(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "leaky", Name: "Leaky", Fail: "bad key " + testKey, RunTime: 10 * time.Millisecond})
	})
	h := newHarness(t, sim)
	r := h.run("send", "leaky", "hi", "--json")
	r.expect(t, ExitTaskFailed)
	l := &leakChecker{t: t, secrets: []string{testKey}}
	l.check("stdout", r.stdout)
	l.check("stderr", r.stderr)
	l.checkDir(h.env["A2A_COURIER_STATE_DIR"])
	if !strings.Contains(r.stdout, "[redacted]") {
		t.Errorf("%s", r.stdout)
	}
}
