package courier

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestWorkerEnvKeepsSecretsBehind checks the environment a detached worker
// inherits: what it needs to reach the server, none of the caller's
// secrets, whatever they are called.
func TestWorkerEnvKeepsSecretsBehind(t *testing.T) {
	in := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "XDG_STATE_HOME=/s",
		"https_proxy=http://proxy:3128", "NO_PROXY=localhost", "SSL_CERT_FILE=/ca.pem",
		"A2A_COURIER_STATE_DIR=/state", "A2A_COURIER_POLL_INTERVAL=20s", "A2A_COURIER_TOKEN_ORIGIN=https://a.example",
		"A2A_COURIER_TOKEN=tok-1", "A2A_COURIER_API_KEY=k-2", "A2A_COURIER_PEER_SECRET=s-3", "A2A_COURIER_PASSWORD=p-4",
		"KIBANA_API_KEY=k-5", "RESEARCH_TOKEN=t-6", "AWS_SECRET_ACCESS_KEY=a-7", "GITHUB_TOKEN=g-8", "SHELL=/bin/bash",
	}
	got := map[string]bool{}
	for _, kv := range workerEnv(in) {
		got[kv] = true
	}
	for _, keep := range in[:12] {
		if !got[keep] {
			t.Errorf("worker environment lacks %q", keep)
		}
	}
	for _, drop := range in[12:] {
		if got[drop] {
			t.Errorf("worker environment keeps %q", drop)
		}
	}
	if len(got) != 12 {
		t.Errorf("worker environment has %d entries, want 12: %v", len(got), got)
	}
}

// TestWorkerGCCanBeTuned: GOGC and GOMEMLIMIT reach the worker, and the
// worker's GOGC 25 applies only when GOGC is not set. Before, workerEnv
// dropped both and the worker set 25 regardless.
func TestWorkerGCCanBeTuned(t *testing.T) {
	got := map[string]bool{}
	for _, kv := range workerEnv([]string{"GOGC=150", "GOMEMLIMIT=64MiB", "PATH=/usr/bin"}) {
		got[kv] = true
	}
	if !got["GOGC=150"] || !got["GOMEMLIMIT=64MiB"] {
		t.Errorf("worker environment: %v, want GOGC and GOMEMLIMIT kept", got)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // as the runtime does at start with GOGC=150
	workerGC()
	if p := debug.SetGCPercent(100); p != 150 {
		t.Errorf("with GOGC=150 the worker's GC percent is %d", p)
	}
	os.Unsetenv("GOGC")
	workerGC()
	if p := debug.SetGCPercent(100); p != workerGCPercent {
		t.Errorf("without GOGC the worker's GC percent is %d, want %d", p, workerGCPercent)
	}
}
