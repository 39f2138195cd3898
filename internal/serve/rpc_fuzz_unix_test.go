//go:build unix

package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

var knownCodes = map[int64]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32603: true, -32001: true, -32002: true, -32004: true, -32050: true}

// FuzzJSONRPC posts any body to the JSON-RPC endpoint and checks the
// answer: 200 with one JSON-RPC response (result or error, never both,
// an error with a known code), or 413, or 503 busy with Retry-After; never
// a 500; and never more tasks than sends it accepted.
func FuzzJSONRPC(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"SendMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"pageSize":1000}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"id":""}}`,
		`{"jsonrpc":"2.0","id":5,"method":"SendMessage","params":{"message":{"messageId":"m3","taskId":"t","parts":[{"text":"x"}]}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"ListTasks","params":{"pageToken":"-1"}}`,
		`[1,2]`, `{`, `null`, `{"jsonrpc":"1.0","method":"GetTask"}`,
	} {
		f.Add(s)
	}
	srv, err := New(Options{Exec: "true", StateDir: f.TempDir(), Listen: "127.0.0.1:0", RatePerMinute: 1e9, Burst: 1e9, ResponseWindow: 50 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.stop(); srv.Close() })
	h := srv.Handler()
	tok, err := os.ReadFile(filepath.Join(srv.opts.StateDir, LocalTokensName))
	if err != nil {
		f.Fatal(err)
	}
	accepted := 0
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(body, "tasks/resubscribe") || strings.Contains(body, "SubscribeToTask") || strings.Contains(body, "message/stream") || strings.Contains(body, "SendStreamingMessage") {
			return // streams are checked by the stream tests
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		h.ServeHTTP(rec, req)
		out := rec.Body.String()
		switch rec.Code {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			if rec.Header().Get("Retry-After") == "" {
				t.Fatalf("503 without Retry-After: %s", out)
			}
		default:
			t.Fatalf("HTTP %d for %q: %s", rec.Code, body, out)
		}
		if !gjson.Valid(out) {
			t.Fatalf("not JSON: %q", out)
		}
		doc := gjson.Parse(out)
		res, e := doc.Get("result"), doc.Get("error")
		if doc.Get("jsonrpc").String() != "2.0" || res.Exists() == e.Exists() {
			t.Fatalf("not one JSON-RPC response: %s", out)
		}
		if e.Exists() && !knownCodes[e.Get("code").Int()] {
			t.Fatalf("unknown error code: %s", out)
		}
		if res.Exists() && (res.Get("kind").String() == "task" || res.Get("task").Exists()) && strings.Contains(doc.Raw, "") {
			if id := res.Get("id").String() + res.Get("task.id").String(); id != "" {
				if _, ok := srv.tasks.get("local", id); !ok {
					t.Fatalf("a task answered is not in the table: %s", out)
				}
			}
		}
		if res.Exists() && rec.Code == http.StatusOK && (strings.Contains(body, "message/send") || strings.Contains(body, "SendMessage")) {
			accepted++
		}
		if n := srv.tasks.count(); n > accepted {
			t.Fatalf("%d tasks for %d accepted sends", n, accepted)
		}
	})
}
