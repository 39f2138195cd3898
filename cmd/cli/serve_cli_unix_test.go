//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServePrintCard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.run("serve", "--exec", "cat", "--name", "muse", "--description", "Muse, headless", "--skill", "review: reviews a diff", "--print-card")
	r.expect(t, ExitOK)
	var card struct {
		Name                string `json:"name"`
		URL                 string `json:"url"`
		ProtocolVersion     string `json:"protocolVersion"`
		SupportedInterfaces []struct {
			URL, ProtocolBinding, ProtocolVersion string
		} `json:"supportedInterfaces"`
		Capabilities map[string]bool `json:"capabilities"`
		Skills       []struct{ ID, Description string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &card); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if card.Name != "muse" || card.URL != "http://127.0.0.1:8790/" || card.ProtocolVersion != "0.3.0" || len(card.SupportedInterfaces) != 3 ||
		card.Capabilities["pushNotifications"] || !card.Capabilities["streaming"] || len(card.Skills) != 1 || card.Skills[0].ID != "review" {
		t.Fatalf("%+v", card)
	}
	if _, err := os.Stat(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "serve", "tasks")); !os.IsNotExist(err) {
		t.Fatalf("--print-card opened the state: %v", err)
	}
}

func TestServeRefusesUnsafeSetups(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	open := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(open, []byte("alice alice-token-0123456789\n"), 0o644)
	os.Chmod(open, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--exec", "cat", "--listen", "0.0.0.0:8790"}, "needs --tls-cert-file, --tls-key-file and --tokens-file"},
		{[]string{"serve", "--exec", "cat", "--tokens-file", open}, "can be read by others"},
		{[]string{"serve"}, "needs --exec"},
		{[]string{"serve", "--exec", "cat", "--skill", ": x", "--print-card"}, "has no id"},
	}
	for _, c := range cases {
		r := h.run(c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, r.code, r.stderr)
		}
	}
}
