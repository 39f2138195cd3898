package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newTestKibana returns a client for url with fast retries.
func newTestKibana(t *testing.T, url string, mod ...func(*KibanaConfig)) *Kibana {
	t.Helper()
	cfg := KibanaConfig{URL: url, APIKey: "a2V5OnNlY3JldA==", MaxRetryWait: 2 * time.Second}
	for _, m := range mod {
		m(&cfg)
	}
	k, err := NewKibana(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k.t.sleep = func(ctx context.Context, d time.Duration) error { return SleepContext(ctx, d/100) }
	return k
}

func TestClassifyHTTPFailures(t *testing.T) {
	t.Parallel()
	proxyPage := "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><h1>502 Bad Gateway</h1></body></html>"
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		wantKind    Kind
		wantStatus  int
		wantMessage string
		wantRetry   time.Duration
	}{
		{"401 kibana envelope", kibanaErr(401, "Unauthorized"), KindAuth, 401, "Unauthorized", 0},
		{"403 privilege", kibanaErr(403, "API [GET /api/agent_builder/agents] is unauthorized for user"), KindForbidden, 403, "is unauthorized for user", 0},
		{"404", kibanaErr(404, "Not Found"), KindNotFound, 404, "Not Found", 0},
		{"413", kibanaErr(413, "Payload content length greater than maximum allowed: 1048576"), KindTooLarge, 413, "maximum allowed", 0},
		{"429 retry-after seconds", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			kibanaErr(429, "Too Many Requests")(w, r)
		}, KindBusy, 429, "Too Many Requests", 120 * time.Second},
		{"503 without retry-after", kibanaErr(503, "Kibana server is not ready yet"), KindBusy, 503, "not ready", 0},
		{"500", kibanaErr(500, "An internal server error occurred."), KindServer, 500, "internal server error", 0},
		{"500 agent not found (9.2)", kibanaErr(500, "Internal server error: Agent nope not found"), KindNotFound, 500, "Agent nope not found", 0},
		{"502 HTML from a proxy", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, proxyPage)
		}, KindServer, 502, "502 Bad Gateway (an HTML page: from a proxy or a web server, not from the agent)", 0},
		{"400", kibanaErr(400, "Request must contain a kbn-xsrf header."), KindBadRequest, 400, "kbn-xsrf", 0},
		{"200 HTML login page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!DOCTYPE html><html><head><title>Elastic</title></head><body>login</body></html>")
		}, KindProtocol, 200, "HTML page instead of JSON", 0},
		{"200 not JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello")
		}, KindProtocol, 200, "not JSON", 0},
		{"200 truncated JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"results":[{"id":"a"`)
		}, KindProtocol, 200, "truncated or malformed JSON", 0},
		{"200 empty body", func(w http.ResponseWriter, r *http.Request) {}, KindProtocol, 200, "empty response body", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Retries = -1 })
			_, err := k.ListAgents(context.Background())
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want *Error", err)
			}
			if ce.Kind != tt.wantKind || ce.StatusCode != tt.wantStatus && tt.wantStatus != 200 {
				t.Errorf("kind %v status %d, want %v %d (%v)", ce.Kind, ce.StatusCode, tt.wantKind, tt.wantStatus, err)
			}
			if !strings.Contains(err.Error(), tt.wantMessage) {
				t.Errorf("error %q does not contain %q", err, tt.wantMessage)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error is not one line: %q", err)
			}
			if ce.RetryAfter != tt.wantRetry {
				t.Errorf("RetryAfter %v, want %v", ce.RetryAfter, tt.wantRetry)
			}
			if strings.Contains(err.Error(), "a2V5OnNlY3JldA") {
				t.Errorf("error text carries the API key: %q", err)
			}
		})
	}
}

func kibanaErr(status int, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"statusCode":%d,"error":%q,"message":%q}`, status, http.StatusText(status), msg)
	}
}

func TestClassifyConnectionFailures(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		k := newTestKibana(t, "http://"+addr)
		_, err = k.ListAgents(context.Background())
		if KindOf(err) != KindUnreachable || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v (%v), want unreachable", KindOf(err), err)
		}
	})
	t.Run("dns", func(t *testing.T) {
		t.Parallel()
		k := newTestKibana(t, "http://no-such-host.invalid")
		_, err := k.ListAgents(context.Background())
		if KindOf(err) != KindUnreachable || !strings.Contains(err.Error(), "cannot resolve host") {
			t.Fatalf("got %v (%v), want unreachable", KindOf(err), err)
		}
	})
	t.Run("tls untrusted", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		k := newTestKibana(t, srv.URL)
		_, err := k.ListAgents(context.Background())
		if KindOf(err) != KindTLS || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("got %v (%v), want tls", KindOf(err), err)
		}
	})
	t.Run("https to a plain HTTP server", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer srv.Close()
		k := newTestKibana(t, strings.Replace(srv.URL, "http://", "https://", 1))
		_, err := k.ListAgents(context.Background())
		if KindOf(err) != KindTLS {
			t.Fatalf("got %v (%v), want tls", KindOf(err), err)
		}
	})
	t.Run("closed before answering", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}))
		defer srv.Close()
		k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Retries = -1 })
		_, err := k.ListAgents(context.Background())
		if KindOf(err) != KindConnection || !MayHaveArrived(err) {
			t.Fatalf("got %v (%v), want connection lost", KindOf(err), err)
		}
	})
	t.Run("reset by the server", func(t *testing.T) {
		// An RST (SO_LINGER 0, then close) after the request was read:
		// ECONNRESET on Unix, WSAECONNRESET on Windows, the same class.
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}))
		defer srv.Close()
		k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Retries = -1 })
		_, err := k.ListAgents(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindConnection || e.Message != "the server closed the connection before answering" || !MayHaveArrived(err) {
			t.Fatalf("got %v (%v), want the connection lost", KindOf(err), err)
		}
	})
	t.Run("cut mid-body", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, `{"results":[`)
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}))
		defer srv.Close()
		k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Retries = -1 })
		_, err := k.ListAgents(context.Background())
		if KindOf(err) != KindConnection || !strings.Contains(err.Error(), "cut off") {
			t.Fatalf("got %v (%v), want a cut-off body", KindOf(err), err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		k := newTestKibana(t, srv.URL)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := k.ListAgents(ctx)
		if KindOf(err) != KindConnection || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("got %v (%v), want a timeout", KindOf(err), err)
		}
	})
}

func TestResponseSizeCap(t *testing.T) {
	t.Parallel()
	big := `{"results":[` + strings.Repeat(`{"id":"x"},`, 20000) + `{"id":"y"}]}`
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !chunked {
					w.Header().Set("Content-Length", fmt.Sprint(len(big)))
				}
				for i := 0; i < len(big); i += 4096 {
					io.WriteString(w, big[i:min(i+4096, len(big))])
					if chunked {
						w.(http.Flusher).Flush()
					}
				}
			}))
			defer srv.Close()
			k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.MaxResponseBytes = 64 << 10 })
			_, err := k.ListAgents(context.Background())
			if KindOf(err) != KindProtocol || !strings.Contains(err.Error(), "larger than the 64 KiB cap") {
				t.Fatalf("got %v (%v), want the size cap", KindOf(err), err)
			}
		})
	}
}

func TestGzipBodies(t *testing.T) {
	t.Parallel()
	doc := `{"results":[{"id":"a","name":"A","description":"` + strings.Repeat("d", 5000) + `"}]}`
	gz := func(parts ...string) []byte {
		var b bytes.Buffer
		for _, p := range parts {
			zw := gzip.NewWriter(&b)
			io.WriteString(zw, p)
			zw.Close()
		}
		return b.Bytes()
	}
	tests := []struct {
		name string
		body []byte
	}{
		{"single member", gz(doc)},
		// Two members: the trailer's ISIZE covers only the second, so the
		// reader must not trust it.
		{"two members", gz(doc[:100], doc[100:])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Accept-Encoding") != "gzip" {
					t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
				}
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(tt.body)
			}))
			defer srv.Close()
			agents, err := newTestKibana(t, srv.URL).ListAgents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(agents) != 1 || len(agents[0].Description) != 5000 {
				t.Fatalf("got %+v", agents)
			}
		})
	}
	t.Run("corrupt gzip", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("not gzip at all"))
		}))
		defer srv.Close()
		_, err := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.Retries = -1 }).ListAgents(context.Background())
		if err == nil || !MayHaveArrived(err) && KindOf(err) != KindConnection {
			t.Fatalf("got %v", err)
		}
	})
}

func TestRetriesOnlyForReads(t *testing.T) {
	t.Parallel()
	var gets, posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int32(0)
		if r.Method == http.MethodGet {
			n = gets.Add(1)
		} else {
			n = posts.Add(1)
		}
		if n <= 2 {
			w.Header().Set("Retry-After", "1")
			kibanaErr(503, "busy")(w, r)
			return
		}
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"results":[]}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"result":{"kind":"message","parts":[{"kind":"text","text":"ok"}]}}`)
	}))
	defer srv.Close()
	k := newTestKibana(t, srv.URL)
	if _, err := k.ListAgents(context.Background()); err != nil {
		t.Fatalf("list after two 503s: %v", err)
	}
	if got := gets.Load(); got != 3 {
		t.Errorf("GET attempts = %d, want 3", got)
	}
	_, err := k.SendMessage(context.Background(), "a", OutgoingMessage{Text: "hi", MessageID: "m", ContextID: "c", Blocking: true})
	if KindOf(err) != KindBusy {
		t.Fatalf("send: got %v, want busy", err)
	}
	if got := posts.Load(); got != 1 {
		t.Errorf("POST attempts = %d, want exactly 1: a send is never retried", got)
	}
}

func TestRetryAfterBeyondCapIsReported(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "3600")
		kibanaErr(429, "slow down")(w, r)
	}))
	defer srv.Close()
	_, err := newTestKibana(t, srv.URL).ListAgents(context.Background())
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindBusy || ce.RetryAfter != time.Hour {
		t.Fatalf("got %v", err)
	}
	if n.Load() != 1 {
		t.Errorf("attempts = %d: a Retry-After longer than the cap must not be waited for", n.Load())
	}
}

func TestNoCredentialAcrossOrigins(t *testing.T) {
	t.Parallel()
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `{"results":[]}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	_, err := newTestKibana(t, srv.URL).ListAgents(context.Background())
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("got %v, want a refused redirect", err)
	}
	if v, _ := leaked.Load().(string); v != "" {
		t.Fatalf("the other origin received Authorization %q", v)
	}
}

func TestSameOriginRedirectKeepsWorking(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/old/api/agent_builder/agents", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/agent_builder/agents", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/api/agent_builder/agents", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "ApiKey a2V5OnNlY3JldA==" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `{"results":[{"id":"a"}]}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	agents, err := newTestKibana(t, srv.URL+"/old").ListAgents(context.Background())
	if err != nil || len(agents) != 1 {
		t.Fatalf("got %v %v", agents, err)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	s := Secret("top-secret-value")
	for _, got := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %q %#v %+v", s, s, s, s, s), fmt.Sprintf("%v", struct{ K Secret }{s})} {
		if strings.Contains(got, "top-secret") {
			t.Errorf("secret printed: %s", got)
		}
	}
	b, _ := s.MarshalJSON()
	if strings.Contains(string(b), "top-secret") {
		t.Errorf("secret marshalled: %s", b)
	}
}

func TestParseKibanaURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "https://kb.example.com", want: "https://kb.example.com"},
		{in: " https://kb.example.com/ ", want: "https://kb.example.com"},
		{in: "https://kb.example.com/kibana/", want: "https://kb.example.com/kibana"},
		{in: "http://localhost:5601?x=1#y", want: "http://localhost:5601"},
		{in: "", wantErr: "empty"},
		{in: "kb.example.com", wantErr: "must start with https://"},
		{in: "ftp://kb.example.com", wantErr: "must start with https://"},
		{in: "127.0.0.1:45601", wantErr: `the Kibana URL "127.0.0.1:45601" must start with https:// or http://`},
		{in: "localhost:45601", wantErr: `the Kibana URL "localhost:45601" must start with https:// or http://`},
		{in: "[::1]:5601/kibana", wantErr: "must start with https://"},
		{in: "user:pw@10.0.0.1:5601", wantErr: `must not carry a user name or password`},
		{in: "https://elastic:1234/Secretpw@kb.example.com", wantErr: `must not carry a user name or password`},
		{in: "https://elastic:?Secret@kb.example.com", wantErr: `must not carry a user name or password`},
		{in: "https://", wantErr: "no host"},
		{in: "https://user:pw@kb.example.com", wantErr: "user name or password"},
		{in: "https://kb.example.com/s/prod", wantErr: "space path"},
		{in: "https://kb.example.com/app/agent_builder", wantErr: "page address"},
	}
	for _, tt := range tests {
		u, err := ParseKibanaURL(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: got %v, want error containing %q", tt.in, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("%q: error shows the password: %v", tt.in, err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case u.String() != tt.want:
			t.Errorf("%q: got %q, want %q", tt.in, u, tt.want)
		}
	}
}

func TestNormalizeAPIKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"abc==":           "abc==",
		"ApiKey abc==":    "abc==",
		"apikey  abc== ":  "abc==",
		"id123:secret456": "aWQxMjM6c2VjcmV0NDU2",
	} {
		if got := NormalizeAPIKey(in); got != want {
			t.Errorf("NormalizeAPIKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckID(t *testing.T) {
	t.Parallel()
	good := []string{"elastic-ai-agent", "a2a-3f6c2e1a-0b1c-4d5e-8f90-123456789abc", "my_agent.v2", "x"}
	bad := []string{"", ".", "..", "../etc/passwd", "a/b", "a b", "a\x00b", ".hidden", "a%2Fb", strings.Repeat("a", 256), "a?b", "a#b"}
	for _, id := range good {
		if err := CheckID("id", id); err != nil {
			t.Errorf("%q refused: %v", id, err)
		}
	}
	for _, id := range bad {
		if err := CheckID("id", id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
}

// TestCutSecretIsHidden: a message cut short in the middle of an echoed
// credential does not show the part before the cut.
func TestCutSecretIsHidden(t *testing.T) {
	const pair = "VuaCfGcBCdbkQm-e5aOx:ui2lp2axTNmsyakw9tvNnw"
	forms := secretForms(base64Std(pair))
	for _, s := range []string{
		"bad key ui2lp2axTNmsya…",
		"HTTP 400: bad key " + base64Std(pair)[:20] + "… (more)",
		"key " + pair[:30] + "…",
	} {
		got := hideForms(s, forms, true)
		if !strings.Contains(got, "[redacted]…") || strings.Contains(got, "ui2lp") || strings.Contains(got, base64Std(pair)[:8]) {
			t.Errorf("%q -> %q", s, got)
		}
	}
	if got := hideForms("nothing secret here…", forms, true); got != "nothing secret here…" {
		t.Errorf("changed an innocent message: %q", got)
	}
	// In a reply "…" is punctuation: only whole forms go.
	bearer := secretForms("Bearer tok-123456789", "tok-123456789")
	for _, s := range []string{"The Polar Bear… is white", "ApiKey… docs", "tok-1234… is not the token"} {
		if got := hideForms(s, bearer, false); got != s {
			t.Errorf("a reply was changed: %q -> %q", s, got)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://elastic:1234/Secretpw@kb.example.com",
		"https://elastic:/Secretpw@kb.example.com",
		"https://elastic:?Secretpw@kb.example.com",
		"https://elastic:#Secretpw@kb.example.com",
		"elastic:Secretpw@kb.example.com/?r=https://x",
		"https://elastic:Secretpw@kb.example.com",
	} {
		if got := RedactURL(raw); strings.Contains(got, "Secretpw") {
			t.Errorf("RedactURL(%q) = %q", raw, got)
		}
	}
	if got := RedactURL("https://kb.example.com:9243/base"); got != "https://kb.example.com:9243/base" {
		t.Errorf("a plain URL changed: %q", got)
	}
}
