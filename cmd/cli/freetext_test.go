package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/store"
)

// failingAgent is a generic A2A agent (0.3) on loopback whose card names
// it name, and whose every task fails saying reason (message/send, and
// tasks/get of the task).
func failingAgent(t *testing.T, name, reason string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":%q,"protocolVersion":"0.3.0","url":%q,"capabilities":{}}`, name, srv.URL+"/")
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		ctx := gjson.GetBytes(body, "params.message.contextId").String()
		switch gjson.GetBytes(body, "method").String() {
		case "message/send", "tasks/get":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"failed",`+
				`"message":{"kind":"message","role":"agent","messageId":"s-1","parts":[{"kind":"text","text":%q}]}}}}`, id, ctx, reason)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFailureTextIsBounded: an agent whose task fails with 8 MiB of text
// (and whose card names it with 1 MiB) makes a record of a few KiB, in
// the foreground and through a detached worker: the reason, and the
// agent's name, cut at 4 KiB with a marker that says how long they were.
// stderr, the document and every later listing stay as small; the text
// kept is the start of the agent's.
func TestFailureTextIsBounded(t *testing.T) {
	t.Parallel()
	reason := strings.Repeat("<é", 8<<20/3) // 8 MiB, a rune of two bytes beside one of one
	name := strings.Repeat("n", 1<<20)
	srv := failingAgent(t, name, reason)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			var ctxID string
			if async {
				r := h.run("send-async", "--url", srv.URL, "hi")
				r.expect(t, ExitOK)
				ctxID = strings.TrimSpace(r.stdout)
				r = h.run("result", ctxID, "--wait", "--timeout", "60s")
				checkSmallFailure(t, r, len(reason))
			} else {
				r := h.run("send", "--url", srv.URL, "hi")
				checkSmallFailure(t, r, len(reason))
				first, _, _ := strings.Cut(r.stderr, "\n")
				ctxID = startedContext(first)
			}
			path := filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", ctxID+".json")
			fi, err := os.Stat(path)
			if err != nil || fi.Size() > 16<<10 {
				t.Fatalf("record %s: %v, %d bytes", path, err, fi.Size())
			}
			rec := loadRecord(t, h, ctxID)
			wantCut := fmt.Sprintf("… [cut: %d bytes in all]", len(reason))
			if rec.State != store.Failed || len(rec.Reason) > store.MaxFreeText || !strings.HasSuffix(rec.Reason, wantCut) ||
				!strings.HasPrefix(reason, strings.TrimSuffix(rec.Reason, wantCut)) || len(rec.Reason) < store.MaxFreeText-8 {
				t.Errorf("%s, reason of %d bytes: %.80q…%q", rec.State, len(rec.Reason), rec.Reason, rec.Reason[max(len(rec.Reason)-60, 0):])
			}
			if want := fmt.Sprintf("… [cut: %d bytes in all]", len(name)); len(rec.Agent) > store.MaxFreeText || !strings.HasSuffix(rec.Agent, want) {
				t.Errorf("agent of %d bytes: …%q", len(rec.Agent), rec.Agent[max(len(rec.Agent)-60, 0):])
			}
			for _, args := range [][]string{{"tasks"}, {"tasks", "--json"}, {"result", ctxID}, {"result", ctxID, "--json"},
				{"fetch", ctxID, "--url", srv.URL}, {"fetch", "--task", "t-1", "--url", srv.URL, "--json"}} {
				r := h.run(args...)
				if out := len(r.stdout) + len(r.stderr); out > 24<<10 || !strings.Contains(r.stdout+r.stderr, "<é<é") {
					t.Errorf("%v: exit %d, %d bytes out", args, r.code, out)
				}
			}
		})
	}
}

// checkSmallFailure: the command exits 6 (the task failed) with a short
// stderr that ends the reason with its marker.
func checkSmallFailure(t *testing.T, r result, reasonBytes int) {
	t.Helper()
	r.expect(t, ExitTaskFailed)
	if len(r.stderr) > 16<<10 || !strings.Contains(r.stderr, fmt.Sprintf("… [cut: %d bytes in all]", reasonBytes)) {
		t.Errorf("stderr of %d bytes: %.200q", len(r.stderr), r.stderr)
	}
}
