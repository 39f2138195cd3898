package httplog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A request through a real loopback server: its line names the method,
// the URL, the status and the time, and no credential, in a header, the
// URL's password or a query parameter.
func TestLogsRequestsWithoutCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "ApiKey c2VjcmV0LWtleQ==" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	hc := Wrap(srv.Client(), logf, time.Now)
	u := strings.Replace(srv.URL, "http://", "http://ada:hunter2@", 1) + "/api/agents?page=2&api_key=s3cr3t-query&X-Amz-Signature=abc123#frag"
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "ApiKey c2VjcmV0LWtleQ==")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: the wrapper lost the header", resp.StatusCode)
	}
	bad, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/a2a?token=tok-123", nil)
	if _, err := hc.Do(bad); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	if !strings.Contains(lines[0], "GET http://ada:redacted@127.0.0.1:") || !strings.Contains(lines[0], "/api/agents?") ||
		!strings.Contains(lines[0], "page=2") || !strings.Contains(lines[0], "→ 200 OK (") || !strings.Contains(lines[0], "11 B)") {
		t.Errorf("line %q", lines[0])
	}
	if !strings.Contains(lines[1], "POST http://127.0.0.1:1/a2a?token=%5Bredacted%5D → error after") {
		t.Errorf("line %q", lines[1])
	}
	for _, secret := range []string{"c2VjcmV0LWtleQ", "secret-key", "hunter2", "s3cr3t-query", "abc123", "tok-123", "frag", "Authorization"} {
		for _, l := range lines {
			if strings.Contains(l, secret) {
				t.Errorf("%q shows %q", l, secret)
			}
		}
	}
}

// WrapMarked logs only the requests whose context carries a label, each
// line starting with it (the worker: the tasks asked for with -v).
func TestWrapMarkedLogsOnlyLabelledRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{}`) }))
	defer srv.Close()
	var mu sync.Mutex
	var lines []string
	hc := WrapMarked(srv.Client(), func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}, time.Now)
	for _, label := range []string{"", "ctx-1", "100%s"} {
		ctx := context.Background()
		if label != "" {
			ctx = WithLabel(ctx, label)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ctx-1: http: GET "+srv.URL+"/x → 200 OK") || !strings.HasPrefix(lines[1], "100%s: http: GET ") {
		t.Fatalf("lines %q", lines)
	}
}

// A request this process calls off (a read made beside another that failed
// first) is said as called off, not as the server's error; one that times
// out is still an error.
func TestACalledOffRequestIsNotAnError(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	var mu sync.Mutex
	var lines []string
	hc := Wrap(srv.Client(), func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/status", nil)
	if _, err := hc.Do(req); err == nil {
		t.Fatal("a called-off request succeeded")
	}
	// Called off with a cause: the cause is said.
	cctx, ccancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { ccancel(errors.New("the card read failed first")) })
	req, _ = http.NewRequestWithContext(cctx, http.MethodGet, srv.URL+"/caused", nil)
	if _, err := hc.Do(req); err == nil {
		t.Fatal("a called-off request succeeded")
	}
	// A real failure whose context is canceled as it returns is the
	// failure, not "called off".
	fctx, fcancel := context.WithCancel(context.Background())
	failing := Wrap(&http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		fcancel()
		return nil, errors.New("x509: certificate signed by unknown authority")
	})}, func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}, time.Now)
	req, _ = http.NewRequestWithContext(fctx, http.MethodGet, "http://127.0.0.1:1/tls", nil)
	if _, err := failing.Do(req); err == nil {
		t.Fatal("a failing request succeeded")
	}
	tctx, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	req, _ = http.NewRequestWithContext(tctx, http.MethodGet, srv.URL+"/slow", nil)
	if _, err := hc.Do(req); err == nil {
		t.Fatal("a request past its deadline succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	calledOff := "http: GET " + srv.URL + "/api/status → called off after "
	if len(lines) != 4 || !strings.HasPrefix(lines[0], calledOff) || strings.Contains(strings.TrimPrefix(lines[0], calledOff), " ") ||
		!strings.Contains(lines[1], "GET "+srv.URL+"/caused → called off after ") || !strings.HasSuffix(lines[1], ": the card read failed first") ||
		!strings.Contains(lines[2], "GET http://127.0.0.1:1/tls → error after ") || !strings.Contains(lines[2], "x509: certificate signed by unknown authority") ||
		!strings.Contains(lines[3], "GET "+srv.URL+"/slow → error after ") || !strings.Contains(lines[3], "deadline exceeded") {
		t.Errorf("lines %q", lines)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
