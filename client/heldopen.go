package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
)

// A request held open for the length of a run (a blocking message/send,
// whose answer comes when the agent has finished, and a stream) goes on a
// connection of its own, whose answer the goroutine that made the request
// reads itself (the dial, the handshake and the write on short-lived
// goroutines beside it). Go's Transport keeps two goroutines for every
// connection it opens (one reading, one writing) beside the caller's, for
// the connection's whole life: a worker on Kibana 9.5 holds one such POST
// for every pending task, so that a thousand tasks held three thousand
// goroutines for the sends alone (docs/performance.md, section scale).
// Such a connection is never pooled anyway: it is busy until the run ends,
// and it is closed then ("Connection: close"). Every other request, and a
// held one that goes through a proxy, goes through Go's Transport.

type heldOpenKey struct{}

// withHeldOpen marks a request's context: its request is held open for a
// run (roundTripper sends it on a connection of its own).
func withHeldOpen(ctx context.Context) context.Context {
	return context.WithValue(ctx, heldOpenKey{}, true)
}

func heldOpen(ctx context.Context) bool {
	v, _ := ctx.Value(heldOpenKey{}).(bool)
	return v
}

// roundTripper is NewHTTPClient's transport: Go's Transport, and for a
// request held open, a connection of its own (direct).
type roundTripper struct {
	pooled *http.Transport
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !heldOpen(req.Context()) || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return rt.pooled.RoundTrip(req)
	}
	if proxy, err := rt.pooled.Proxy(req); err != nil || proxy != nil {
		// Through a proxy (or a proxy setting that does not parse, which
		// Go's Transport reports): Go's Transport speaks to it.
		return rt.pooled.RoundTrip(req)
	}
	return rt.direct(req)
}

// CloseIdleConnections closes the pooled connections (http.Client's
// CloseIdleConnections): a held connection is never idle.
func (rt *roundTripper) CloseIdleConnections() { rt.pooled.CloseIdleConnections() }

// direct sends req on a new connection, as Go's Transport would (the same
// dialer, TLS configuration and handshake bound, the client trace's
// GotConn and WroteRequest, on which the send gate relies), and returns
// the response with its body on that connection: closing the body closes
// the connection, and so does the end of the request's context.
func (rt *roundTripper) direct(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var conn net.Conn
	var err error
	offStack(func() { conn, err = rt.connect(ctx, req.URL) })
	if err != nil {
		return nil, stoppedError(ctx, err)
	}
	c := &heldConn{Conn: conn}
	stop := context.AfterFunc(ctx, c.close)
	resp, err := c.exchange(req, rt.maxHeaderBytes())
	if err != nil {
		stop()
		c.close()
		<-c.written // ended by the close; its trace events come first
		return nil, stoppedError(ctx, err)
	}
	resp.Body = &heldBody{body: resp.Body, conn: c, stop: stop, ctx: ctx}
	return resp, nil
}

// stoppedError is err, or, when the request's context has ended (the
// connection was closed for it, or the dial given up), that context's
// error alone, as Go's Transport says it: a caller's stop is "canceled",
// not "unreachable", and a deadline "timed out" (classifyTransportError);
// the socket's own words ("use of closed network connection") would only
// reach the user's message.
func stoppedError(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}

// maxHeaderBytes bounds an answer's status line and header, as Go's
// Transport bounds them (MaxResponseHeaderBytes, 10 MB by default).
func (rt *roundTripper) maxHeaderBytes() int64 {
	if n := rt.pooled.MaxResponseHeaderBytes; n > 0 {
		return n
	}
	return 10 << 20
}

// connect dials u's host with the pooled connections' dialer and, for
// https, makes the TLS handshake.
func (rt *roundTripper) connect(ctx context.Context, u *url.URL) (net.Conn, error) {
	conn, err := rt.pooled.DialContext(ctx, "tcp", hostPort(u))
	if err != nil || u.Scheme != "https" {
		return conn, err
	}
	return rt.handshake(ctx, conn, u.Hostname())
}

// offStack runs fn on a goroutine of its own and waits for it; a panic of
// fn's is raised again on the caller's goroutine, where the caller's
// recover (the MCP server's, per call) sees it. A held request's goroutine
// waits for the agent's whole run, and Go shrinks a waiting goroutine's
// stack only while it uses less than a quarter of it: the deep calls of a
// dial, a TLS handshake or a record's write (the send gate's BeforeSend),
// made on it, would keep its stack at 16 KiB instead of 8 for the run's
// length. 1,000 open POSTs of a worker on 9.5: 8 MiB
// (BenchmarkWorkerHeldSends in internal/courier, docs/performance.md).
func offStack(fn func()) {
	done := make(chan any, 1)
	go func() {
		// nil when fn returned (a panic(nil) recovers as a
		// *runtime.PanicNilError).
		defer func() { done <- recover() }()
		fn()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}

// handshake is the TLS client handshake of a new connection, bounded as
// Go's Transport bounds it (TLSHandshakeTimeout), and offering no
// application protocol, as the pooled connections do (a Transport given
// its own TLS configuration speaks HTTP/1.1): the server answers in
// HTTP/1.1.
func (rt *roundTripper) handshake(ctx context.Context, conn net.Conn, host string) (net.Conn, error) {
	cfg := &tls.Config{}
	if rt.pooled.TLSClientConfig != nil {
		cfg = rt.pooled.TLSClientConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = nil
	tc := tls.Client(conn, cfg)
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if d := rt.pooled.TLSHandshakeTimeout; d > 0 {
		hctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, handshakeTimeout{}
		}
		return nil, err
	}
	return tc, nil
}

// handshakeTimeout is Go's Transport's error for a handshake past
// TLSHandshakeTimeout: a net.Error that timed out.
type handshakeTimeout struct{}

func (handshakeTimeout) Error() string   { return "net/http: TLS handshake timeout" }
func (handshakeTimeout) Timeout() bool   { return true }
func (handshakeTimeout) Temporary() bool { return true }

// hostPort is the address to dial for u: its host, with the scheme's port
// when it names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// heldConn is the connection of one held request.
type heldConn struct {
	net.Conn
	once sync.Once
	// written is closed when the request's writer has returned, its error
	// in writeErr then.
	written  chan struct{}
	writeErr error
}

func (c *heldConn) close() { c.once.Do(func() { c.Conn.Close() }) }

// max1xx is how many informational answers come before the answer at
// most, as Go's Transport allows.
const max1xx = 5

// exchange writes req (asking the server to close the connection after
// its answer) and reads the answer's status line and header, at most
// maxHeader bytes of each (informational answers passed over). The request
// is written on a goroutine of its own while this one reads, as Go's
// Transport does: a server may answer before it has read the whole
// request (a 413 for a body over its limit, from its Content-Length) and
// close, and that answer is the outcome, not the write's broken pipe. The
// writer lives as long as the write.
func (c *heldConn) exchange(req *http.Request, maxHeader int64) (*http.Response, error) {
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.Conn})
	}
	out := *req
	out.Close = true
	c.written = make(chan struct{})
	go func() {
		defer close(c.written)
		// Given a writer that does not buffer, Request.Write buffers the
		// request itself, for the write only, and flushes it before it
		// calls the trace's WroteRequest: "written" says the bytes left.
		c.writeErr = out.Write(struct{ io.Writer }{c.Conn})
	}()
	resp, err := readAnswer(c.Conn, req, maxHeader)
	if err != nil {
		select {
		case <-c.written:
			if c.writeErr != nil {
				// The write failed first: the server went away while the
				// request was being written, which says more.
				return nil, c.writeErr
			}
		default:
		}
		return nil, err
	}
	if resp.StatusCode < 300 {
		// The server took the request: its write is over, or about to
		// be. Waiting for it puts the trace's WroteRequest (the send
		// gate's "written" event) before anything the answer brings.
		select {
		case <-c.written:
		case <-req.Context().Done():
		}
	}
	return resp, nil
}

// readAnswer reads the answer to req from conn: its status line and
// header bounded by maxHeader bytes (each informational answer's too), its
// body unbounded here (the caller's reader bounds it). The same 1 KiB read
// buffer as a pooled connection (NewHTTPClient).
func readAnswer(conn net.Conn, req *http.Request, maxHeader int64) (*http.Response, error) {
	lr := &io.LimitedReader{R: conn, N: maxHeader}
	r := bufio.NewReaderSize(lr, 1<<10)
	for range max1xx + 1 {
		lr.N = maxHeader
		resp, err := http.ReadResponse(r, req)
		if err != nil {
			if lr.N <= 0 {
				return nil, fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHeader)
			}
			return nil, err
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			lr.N = math.MaxInt64
			return resp, nil
		}
	}
	return nil, errors.New("net/http: too many 1xx informational responses")
}

// heldBody is the body of a held request's answer: read on its
// connection, which Close closes.
type heldBody struct {
	body io.ReadCloser
	conn *heldConn
	stop func() bool
	ctx  context.Context
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && err != io.EOF {
		err = stoppedError(b.ctx, err)
	}
	return n, err
}

func (b *heldBody) Close() error {
	b.stop()
	b.conn.close()
	// Closed, the connection ends a write still going on (an early
	// refusal's): its WroteRequest comes before Close returns.
	<-b.conn.written
	return nil
}
