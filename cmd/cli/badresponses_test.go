package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// badServer answers the agents list with list, a card for agent "x", the
// A2A POST with post, and 404 for conversations.
func badServer(t *testing.T, list, post http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	if list != nil {
		mux.HandleFunc("GET /api/agent_builder/agents", list)
	}
	mux.HandleFunc("GET /api/agent_builder/a2a/x.json", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"name":"X","protocolVersion":"0.3.0","url":"http://x","capabilities":{"streaming":false}}`)
	})
	if post != nil {
		mux.HandleFunc("POST /api/agent_builder/a2a/x", post)
	}
	mux.HandleFunc("GET /api/agent_builder/conversations/", func(w http.ResponseWriter, r *http.Request) {
		kibanaError(w, 404, "Conversation not found")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func kibanaError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"statusCode":%d,"error":%q,"message":%q}`, status, http.StatusText(status), msg)
}

func status(code int, retryAfter string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		kibanaError(w, code, http.StatusText(code))
	}
}

func body(contentType, b string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, b)
	}
}

const proxyHTML = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"

// TestBadResponses: every kind of bad answer to a read gets its documented
// exit code and a one-line error with a hint; nothing panics.
func TestBadResponses(t *testing.T) {
	t.Parallel()
	huge := func(chunked bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			const size = 100 << 20
			if !chunked {
				w.Header().Set("Content-Length", fmt.Sprint(size))
			}
			io.WriteString(w, `{"results":["`)
			chunk := strings.Repeat("x", 1<<20)
			for i := 0; i < 100; i++ {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}
	}
	drip := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for _, c := range `{"results":[]}` {
			fmt.Fprintf(w, "%c", c)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
				return
			}
		}
	}
	reads := []struct {
		name    string
		handler http.HandlerFunc
		args    []string
		code    int
		message string
	}{
		{"HTML error page from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, proxyHTML)
		}, nil, ExitUnreachable, "502 Bad Gateway (an HTML page: from a proxy or a web server, not from the agent)"},
		{"HTML login page with 200", body("text/html", "<!DOCTYPE html><html><head><title>Log in</title></head></html>"), nil, ExitUnexpected, "HTML page instead of JSON"},
		{"not JSON", body("text/plain", "hello"), nil, ExitUnexpected, "not JSON"},
		{"truncated JSON", body("application/json", `{"results":[{"id":`), nil, ExitUnexpected, "truncated or malformed JSON"},
		{"100 MB body with Content-Length", huge(false), nil, ExitUnexpected, "larger than the 32 MiB cap"},
		{"100 MB body, chunked", huge(true), nil, ExitUnexpected, "larger than the 32 MiB cap"},
		{"a body that drips one byte a second", drip, []string{"--timeout", "2s"}, ExitUnreachable, "did not complete in time"},
		{"401", status(401, ""), nil, ExitAuth, "HTTP 401"},
		{"403", status(403, ""), nil, ExitAuth, "HTTP 403"},
		{"404", status(404, ""), nil, ExitNotFound, "HTTP 404"},
		{"413", status(413, ""), nil, ExitUsage, "HTTP 413"},
		{"429 with Retry-After beyond the cap", status(429, "120"), nil, ExitBusy, "HTTP 429"},
		{"429 without Retry-After", status(429, ""), nil, ExitBusy, "HTTP 429"},
		{"503 with Retry-After", status(503, "1"), nil, ExitBusy, "HTTP 503"},
		{"503 without Retry-After", status(503, ""), nil, ExitBusy, "HTTP 503"},
		{"500", status(500, ""), nil, ExitUnexpected, "HTTP 500"},
		{"501 (not Kibana)", status(501, ""), nil, ExitUsage, "HTTP 501"},
		{"400", status(400, ""), nil, ExitUsage, "HTTP 400"},
		{"405", status(405, ""), nil, ExitUsage, "HTTP 405"},
	}
	for _, tt := range reads {
		t.Run("discover: "+tt.name, func(t *testing.T) {
			t.Parallel()
			srv := badServer(t, tt.handler, nil)
			h := newHarness(t, nil)
			h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = srv.URL, testKey
			r := h.run(append([]string{"discover"}, tt.args...)...)
			checkOneLineError(t, r, tt.code, tt.message)
		})
	}
}

// TestBadResponsesToSend: a send refused gets the code of the refusal; an
// answer lost behind a proxy is followed, never failed.
func TestBadResponsesToSend(t *testing.T) {
	t.Parallel()
	rpc := func(code int) http.HandlerFunc {
		return body("application/json", fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"error %d"}}`, code, code))
	}
	sends := []struct {
		name    string
		handler http.HandlerFunc
		code    int
		message string
	}{
		{"413", status(413, ""), ExitUsage, "HTTP 413"},
		{"429", status(429, "30"), ExitBusy, "HTTP 429"},
		{"503", status(503, ""), ExitBusy, "HTTP 503"},
		{"401", status(401, ""), ExitAuth, "HTTP 401"},
		{"400", status(400, ""), ExitUsage, "HTTP 400"},
		{"an HTML page with 200", body("text/html", "<html><title>Sign in</title></html>"), ExitUnexpected, "HTML page instead of JSON"},
		// The run may go on behind these: the task is followed, and with a
		// short maximum wait it ends expired (exit 8), never failed.
		{"HTML 502 from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, proxyHTML)
		}, ExitStillRunning, ""},
		{"truncated JSON-RPC answer", body("application/json", `{"jsonrpc":"2.0","result":{"kind":"mess`), ExitStillRunning, ""},
		{"524 from a proxy (the origin had it and timed out)", status(524, ""), ExitStillRunning, ""},
		{"520 from a proxy (the origin broke off)", status(520, ""), ExitStillRunning, ""},
	}
	for _, code := range []int{-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009} {
		// The code of the refusal, as for any command: the request as sent
		// is one the agent does not take (2), but an unknown task (5), one
		// that has finished (6) and the agent's own failure (1).
		want := map[int]int{-32001: ExitNotFound, -32002: ExitTaskFailed, -32603: ExitUnexpected}[code]
		if want == 0 {
			want = ExitUsage
		}
		sends = append(sends, struct {
			name    string
			handler http.HandlerFunc
			code    int
			message string
		}{fmt.Sprintf("JSON-RPC error %d", code), rpc(code), want, fmt.Sprintf("JSON-RPC error %d", code)})
	}
	for _, tt := range sends {
		t.Run("send: "+tt.name, func(t *testing.T) {
			t.Parallel()
			srv := badServer(t, nil, tt.handler)
			h := newHarness(t, nil)
			h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = srv.URL, testKey
			// A short maximum wait only where the wait is what is tested:
			// elsewhere a loaded machine must not turn a refusal into
			// "expired".
			maxWait := "30s"
			if tt.code == ExitStillRunning {
				maxWait = "1s"
			}
			r := h.run("send", "x", "hello", "--max-wait", maxWait, "--poll-interval", "200ms")
			if tt.code == ExitStillRunning {
				r.expect(t, ExitStillRunning)
				if !strings.Contains(r.stderr, "a2a-courier fetch ") {
					t.Errorf("no resume command: %q", r.stderr)
				}
				return
			}
			checkOneLineError(t, r, tt.code, tt.message)
		})
	}
}

func checkOneLineError(t *testing.T, r result, code int, message string) {
	t.Helper()
	r.expect(t, code)
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("a panic escaped: %s", r.stderr)
	}
	lines := strings.Split(strings.TrimRight(afterStarted(r.stderr), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "a2a-courier: ") || !strings.HasPrefix(lines[1], "hint: ") {
		t.Fatalf("want one error line and one hint line, got:\n%s", r.stderr)
	}
	if !strings.Contains(lines[0], message) {
		t.Errorf("error %q does not say %q", lines[0], message)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q", r.stdout)
	}
}
