package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerboseSendAsyncLogsItsRequests: the detached worker makes a
// send-async's requests. With -v, send-async says so and names the worker
// log, and the worker logs each request of that task there, marked with
// its contextId, never the credential; a task sent without -v has none of
// its requests logged, even by the same worker.
func TestVerboseSendAsyncLogsItsRequests(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	r := p.run("-v", "send-async", "elastic-ai-agent", "show me the requests")
	r.expect(t, ExitOK)
	shown := strings.TrimSpace(r.stdout)
	logPath := filepath.Join(p.env["A2A_COURIER_STATE_DIR"], "logs", "worker.log")
	if !strings.Contains(r.stderr, "the background worker makes the requests of task "+shown+"; it logs each (never a credential) to "+logPath) {
		t.Errorf("stderr %q", r.stderr)
	}
	p.run("result", shown, "--wait", "--timeout", "30s").expect(t, ExitOK)
	r = p.run("send-async", "elastic-ai-agent", "quietly")
	r.expect(t, ExitOK)
	quiet := strings.TrimSpace(r.stdout)
	if strings.Contains(r.stderr, "worker.log") {
		t.Errorf("without -v: %q", r.stderr)
	}
	p.run("result", quiet, "--wait", "--timeout", "30s").expect(t, ExitOK)
	p.waitWorkersExit()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if !strings.Contains(log, shown+": http: POST "+sim.URL+"/api/agent_builder/a2a/elastic-ai-agent → 200 OK") {
		t.Errorf("the send is not in the worker log:\n%s", log)
	}
	if strings.Contains(log, quiet+": http:") {
		t.Errorf("a task sent without -v has its requests logged:\n%s", log)
	}
	for _, secret := range []string{testKey, decoded(t, testKey)} {
		if strings.Contains(log, secret) {
			t.Errorf("the worker log holds the credential %q", secret)
		}
	}
}

func decoded(t *testing.T, key string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
