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
// no goroutine: each is written and read by the goroutine that sent it
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		var body struct{ ID string }
		_ = decodeJSONBody(req.Body, &body)
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"kind":"message","role":"agent","messageId":"r1","contextId":"c1","parts":[{"kind":"text","text":"Late hi"}]}}`, body.ID)
		fmt.Fprintf(c, "HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(reply), reply)
	}()
	k := newTestKibana(t, "http://"+ln.Addr().String(), func(c *KibanaConfig) { c.APIKey = testKey })
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
	if !errors.Is(err, context.Canceled) || !IsKind(err, KindConnection) {
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
