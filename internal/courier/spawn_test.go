package courier

import "testing"

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
