//go:build unix

package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// sdkAgent answers in capitals and waits (until canceled) on "wait".
const sdkAgent = `/bin/sh -c 'echo working >&2; msg=$(cat); case "$msg" in *wait*) sleep 300;; esac; printf "%s" "$msg" | tr a-z A-Z'`

type sdkStep struct {
	Step       string   `json:"step"`
	OK         bool     `json:"ok"`
	State      string   `json:"state"`
	Reply      string   `json:"reply"`
	Kinds      []string `json:"kinds"`
	Count      int      `json:"count"`
	Before     string   `json:"before"`
	Subscribed []string `json:"subscribed"`
	Message    string   `json:"message"`
	Protocol   string   `json:"protocol"`
}

func runSDKClient(t *testing.T, argv []string, url, token string, extra ...string) map[string]sdkStep {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], append(append(argv[1:], "--url", url), extra...)...)
	c.Env = append(os.Environ(), "A2A_SDK_TOKEN="+token)
	out, err := c.Output()
	steps := map[string]sdkStep{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var s sdkStep
		if json.Unmarshal([]byte(line), &s) == nil {
			steps[s.Step] = s
		}
	}
	if err != nil || !steps["cancel"].OK {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return steps
}

func checkSDKSteps(t *testing.T, steps map[string]sdkStep, who, completed, working, canceled string, list bool) {
	t.Helper()
	want := strings.ToUpper("hello from " + who)
	if s := steps["send"]; s.State != completed || s.Reply != want {
		t.Errorf("send: %+v", s)
	}
	if s := steps["stream"]; s.State != completed || s.Reply != strings.ToUpper("stream from "+who) || len(s.Kinds) < 3 || s.Kinds[0] != "task" {
		t.Errorf("stream: %+v", s)
	}
	if s := steps["get"]; s.State != completed || s.Reply != want {
		t.Errorf("get: %+v", s)
	}
	if s, ok := steps["list"]; list && (!ok || s.Count != 2) {
		t.Errorf("list: %+v", s)
	}
	if s := steps["cancel"]; s.Before != working || s.State != canceled || len(s.Subscribed) < 2 || s.Subscribed[0] != working || s.Subscribed[len(s.Subscribed)-1] != canceled {
		t.Errorf("cancel: %+v", s)
	}
}

// The @a2a-js/sdk 1.3.0 client drives serve over each interface its card
// offers: send, stream, get, list by contextId (1.0), cancel mid-run and
// subscribe, with a bearer token.
func TestA2AJSClientDrivesServe(t *testing.T) {
	argv := interoptest.JSClientCommand(t)
	tokens := writeTokens(t, 0o600)
	s := startServer(t, Options{Exec: sdkAgent, TokensFile: tokens, Limits: testLimits})
	for _, iface := range [][2]string{{"JSONRPC", "1.0"}, {"HTTP+JSON", "1.0"}, {"JSONRPC", "0.3"}} {
		t.Run(iface[0]+"-"+iface[1], func(t *testing.T) {
			steps := runSDKClient(t, argv, s.url, "alice-token-0123456789", "--binding", iface[0], "--version", iface[1])
			if steps["client"].Protocol != iface[1] {
				t.Fatalf("the SDK spoke %q", steps["client"].Protocol)
			}
			checkSDKSteps(t, steps, "a2a-js", "TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_CANCELED", iface[1] == "1.0")
		})
	}
	audit, _ := os.ReadFile(filepath.Join(s.dir, "audit.jsonl"))
	if strings.Contains(string(audit), "hello from") || strings.Contains(string(audit), "alice-token") {
		t.Fatalf("the audit log holds content or a token:\n%s", audit)
	}
}

// The a2a-go v0.3.3 client (A2A 0.3, JSON-RPC) drives serve: send,
// stream, get, cancel mid-run and resubscribe.
func TestA2AGoClientDrivesServe(t *testing.T) {
	argv := interoptest.GoClientCommand(t)
	s := startServer(t, Options{Exec: sdkAgent, TokensFile: writeTokens(t, 0o600), Limits: testLimits})
	steps := runSDKClient(t, argv, s.url, "bob-token-0123456789abc")
	checkSDKSteps(t, steps, "a2a-go", "completed", "working", "canceled", false)
}
