//go:build unix

package serve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/client"
)

// A loopback server without --tokens-file still wants a token: it makes
// its own, owner-only, in the state directory, names the file (never the
// token) in its log, and keeps it across restarts.
func TestLoopbackWithoutTokensFileWantsTheGeneratedToken(t *testing.T) {
	var log bytes.Buffer
	dir := t.TempDir()
	s := startServer(t, Options{Exec: "cat", StateDir: dir, Log: &log})
	path := filepath.Join(dir, "local-token")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(b))
	if len(token) < MinTokenLength || strings.ContainsAny(token, " \n") {
		t.Fatalf("token file holds %q", b)
	}
	var ce *client.Error
	_, err = s.client(t, client.V10, client.BindingJSONRPC, noToken).Send(context.Background(), msg("no token"), false)
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v", err)
	}
	res, err := s.client(t, client.V10, client.BindingJSONRPC, token).Send(context.Background(), msg("with token"), false)
	if err != nil || res.State != "completed" {
		t.Fatalf("%+v %v", res, err)
	}
	s.stop()
	if strings.Contains(log.String(), token) || !strings.Contains(log.String(), path) || !strings.Contains(log.String(), "--token-file "+path) {
		t.Fatalf("log:\n%s", log.String())
	}
	startServer(t, Options{Exec: "cat", StateDir: dir})
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Fatalf("the token changed across a restart")
	}
}
