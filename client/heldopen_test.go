package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/rawtest"
)

// transportGoroutines counts the goroutines Go's Transport keeps for its
// open connections (a read loop and a write loop each).
func transportGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "net/http.(*persistConn).readLoop(") +
		strings.Count(string(buf), "net/http.(*persistConn).writeLoop(")
}

// TestHeldSendsKeepNoTransportGoroutines: 20 blocking sends held open at
// once on one Kibana (each waits for its agent's run) cost Go's Transport
// no goroutine: each is read by the goroutine that sent it
// (on main, 40 more: a read loop and a write loop per connection). Every
// send gets its reply, once. Not parallel: the count is the process's.
func TestHeldSendsKeepNoTransportGoroutines(t *testing.T) {
	const n = 20
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "held", Name: "Held", RunTime: 3 * time.Second, Reply: "Done: {{input}}."})
	})
	k := simClient(t, sim, testKey, "")
	before := transportGoroutines()
	var wg sync.WaitGroup
	errs := make([]error, n)
	replies := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := k.SendMessage(context.Background(), "held", OutgoingMessage{Text: fmt.Sprint("t", i),
				MessageID: fmt.Sprint("m", i), ContextID: fmt.Sprint("c", i), Blocking: true})
			errs[i] = err
			if res != nil {
				replies[i] = res.Text
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for sim.ActiveRuns() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := sim.ActiveRuns(); got != n {
		t.Fatalf("%d runs going on, want %d", got, n)
	}
	during := transportGoroutines()
	wg.Wait()
	if during > before {
		t.Errorf("%d sends held open: the transport's goroutines went from %d to %d", n, before, during)
	}
	for i := range n {
		if errs[i] != nil || replies[i] != fmt.Sprintf("Done: t%d.", i) || sim.Runs(fmt.Sprint("c", i)) != 1 {
			t.Errorf("send %d: %q, %v, %d runs", i, replies[i], errs[i], sim.Runs(fmt.Sprint("c", i)))
		}
	}
}

// TestHeldSendOverTLS: a blocking send to an https Kibana whose CA is
// given goes on a connection of its own, verified, speaking HTTP/1.1
// (the server offers HTTP/2 too); a server whose certificate is not
// trusted is refused as untrusted, the send never written.
func TestHeldSendOverTLS(t *testing.T) {
	t.Parallel()
	o := testSimOptions()
	sim := agentbuildertest.New(o)
	t.Cleanup(sim.Close)
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		sim.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	trusted := &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, MinVersion: tls.VersionTLS12}
	k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.APIKey = testKey; c.HTTPClient = NewHTTPClient(trusted) })
	res, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: true})
	if err != nil || res.Text != "Echo: hi" {
		t.Fatalf("%+v, %v", res, err)
	}
	protos.Range(func(p, _ any) bool {
		if p != "HTTP/1.1" {
			t.Errorf("the send spoke %s", p)
		}
		return true
	})
	untrusted := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.APIKey = testKey; c.HTTPClient = NewHTTPClient(nil) })
	_, err = untrusted.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hi", MessageID: "m2", ContextID: "c2", Blocking: true})
	if !IsKind(err, KindTLS) || sim.Runs("c2") != 0 {
		t.Errorf("untrusted: %v, %d runs", err, sim.Runs("c2"))
	}
}

// TestHeldSendThroughAProxy: a blocking send whose URL a proxy serves
// goes through Go's Transport, which speaks to the proxy: the proxy
// carries it, once.
func TestHeldSendThroughAProxy(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	var carried atomic.Int32
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		carried.Add(1)
		r.Out.URL = r.In.URL // absolute: the request as a proxy gets it
	}})
	t.Cleanup(proxy.Close)
	hc := NewHTTPClient(nil)
	pu, _ := url.Parse(proxy.URL)
	hc.Transport.(*roundTripper).pooled.Proxy = http.ProxyURL(pu)
	k := newTestKibana(t, sim.URL, func(c *KibanaConfig) { c.APIKey = testKey; c.HTTPClient = hc })
	res, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: true})
	if err != nil || res.Text != "Echo: hi" {
		t.Fatalf("%+v, %v", res, err)
	}
	if carried.Load() != 1 || sim.Runs("c1") != 1 {
		t.Errorf("the proxy carried %d requests; %d runs", carried.Load(), sim.Runs("c1"))
	}
}

// TestHeldSendPassesOverInformationalAnswers: a server that answers a
// held send with "102 Processing" before its answer (a proxy keeping the
// line alive) has its final answer read.
func TestHeldSendPassesOverInformationalAnswers(t *testing.T) {
	t.Parallel()
	addr := rawtest.Serve(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		var body struct{ ID string }
		_ = decodeJSONBody(req.Body, &body)
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"kind":"message","role":"agent","messageId":"r1","contextId":"c1","parts":[{"kind":"text","text":"Late hi"}]}}`, body.ID)
		fmt.Fprintf(c, "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(reply), reply)
	})
	k := newTestKibana(t, "http://"+addr, func(c *KibanaConfig) { c.APIKey = testKey })
	res, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: true})
	if err != nil || res.Text != "Late hi" {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestHeldSendEndsWithItsContext: a held send whose caller stops while the
// agent runs returns at once, as canceled, and its connection is closed
// (the server's handler sees its request end).
func TestHeldSendEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ended := make(chan struct{})
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The whole request read: the server then sees its connection
		// end (net/http watches it only past the body).
		_, _ = io.Copy(io.Discard, r.Body)
		close(started)
		select {
		case <-r.Context().Done():
			close(ended)
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(srv.Close)
	k := newTestKibana(t, srv.URL, func(c *KibanaConfig) { c.APIKey = testKey })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := k.SendMessage(ctx, "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: true})
	// Said as Go's Transport says it: no socket's words in the message
	// (it had "(read tcp …: use of closed network connection)").
	if !errors.Is(err, context.Canceled) || !IsKind(err, KindConnection) || strings.Contains(err.Error(), "closed network connection") {
		t.Errorf("err = %v", err)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never saw the connection end")
	}
}

func decodeJSONBody(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// TestHeldSendSeesAnEarlyRefusal: a server that refuses a body over its
// limit from its Content-Length, with 413, before reading it (Kibana's
// hapi does; so does Go's server for a handler that does not read), and
// closes: a held send reports the 413, as a pooled one does, not the
// write's broken pipe ("connection lost, may have arrived": followed by
// reads for a message that never ran). Before the held request was
// written and read at once, 3 sends of 3 said "connection reset".
func TestHeldSendSeesAnEarlyRefusal(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 1<<20 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			io.WriteString(w, `{"statusCode":413,"error":"Request Entity Too Large","message":"Payload content length greater than maximum allowed: 1048576"}`)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	k := newTestKibana(t, srv.URL)
	text := strings.Repeat("x", 4<<20)
	for _, blocking := range []bool{false, true} {
		for i := range 3 {
			_, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: text, MessageID: fmt.Sprint("m", i), ContextID: "c1", Blocking: blocking})
			if !IsKind(err, KindTooLarge) || MayHaveArrived(err) {
				t.Errorf("blocking %v, send %d: %v (may have arrived: %v)", blocking, i, err, MayHaveArrived(err))
			}
		}
	}
}

// TestHeldAnswerHeaderIsBounded: an answer whose header never ends (32 MiB
// of one line) is refused past 10 MB, as Go's Transport refuses it, held
// or pooled. Before, the held send read it all (a 200 MiB line: 1.3 GiB
// allocated) and then said "empty response body".
func TestHeldAnswerHeaderIsBounded(t *testing.T) {
	t.Parallel()
	addr := rawtest.Serve(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 32 {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(c, "\r\nContent-Length: 0\r\n\r\n")
	})
	k := newTestKibana(t, "http://"+addr)
	for _, blocking := range []bool{false, true} {
		_, err := k.SendMessage(context.Background(), "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: blocking})
		if err == nil || !strings.Contains(err.Error(), "headers exceeded 10485760 bytes") {
			t.Errorf("blocking %v: %v", blocking, err)
		}
	}
}

// TestHeldConnectErrorsAreSaidAsPooled: a caller that stops while the
// connection is being made, a deadline that passes then, and a TLS
// handshake never answered are said the same way, held or pooled: a stop
// is "canceled" (not "unreachable"), a deadline "timed out waiting for the
// server", the handshake's bound a timeout. Before, the held send said
// "unreachable" for the first two and the handshake's error was no timeout.
func TestHeldConnectErrorsAreSaidAsPooled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	silent := rawtest.Serve(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	// The dial waits for the caller's stop, then dials with the stopped
	// context (what a slow SYN-ACK gives).
	var d net.Dialer
	slow := func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return d.DialContext(ctx, network, addr)
	}
	cases := []struct {
		name string
		url  string
		rt   func(*roundTripper)
		ctx  func() (context.Context, context.CancelFunc)
		want string
	}{
		{"stopped while dialling", srv.URL, func(rt *roundTripper) { rt.pooled.DialContext = slow },
			func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
				return ctx, cancel
			}, "canceled"},
		{"deadline while dialling", srv.URL, func(rt *roundTripper) { rt.pooled.DialContext = slow },
			func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 100*time.Millisecond)
			}, "timed out waiting for the server"},
		{"handshake never answered", "https://" + silent, func(rt *roundTripper) { rt.pooled.TLSHandshakeTimeout = 200 * time.Millisecond },
			func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Minute)
			},
			"timed out waiting for the server"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hc := NewHTTPClient(nil)
			tc.rt(hc.Transport.(*roundTripper))
			k := newTestKibana(t, tc.url, func(c *KibanaConfig) { c.HTTPClient = hc })
			for _, blocking := range []bool{false, true} {
				ctx, cancel := tc.ctx()
				_, err := k.SendMessage(ctx, "echo", OutgoingMessage{Text: "hi", MessageID: "m1", ContextID: "c1", Blocking: blocking})
				cancel()
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindConnection || e.Message != tc.want {
					t.Errorf("blocking %v: %v", blocking, err)
				}
			}
		})
	}
}

// TestAPanicInBeforeSendReachesTheCaller: BeforeSend runs off the send's
// stack (offStack); a panic there (a bug in the record's write) is raised
// again on the goroutine that sends, where its caller's recover (the MCP
// server's, per call) catches it. Before, it ended the process.
func TestAPanicInBeforeSendReachesTheCaller(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	hc := NewHTTPClient(nil)
	for _, held := range []bool{false, true} {
		// A gate is one send's: the panic leaves it as it was.
		_, traced, stop := newSendGate(context.Background(), func() error { panic("bug in BeforeSend") }, nil, nil)
		defer stop()
		ctx := traced
		if held {
			ctx = withHeldOpen(traced)
		}
		got := func() (r any) {
			defer func() { r = recover() }()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
			}
			return nil
		}()
		if got != "bug in BeforeSend" {
			t.Errorf("held %v: recovered %v", held, got)
		}
	}
}
