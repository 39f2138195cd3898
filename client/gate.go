package client

import (
	"context"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// sendGate stands between a delivery's send and the server: net/http calls
// its gotConn (httptrace GotConn) on the goroutine that makes the request,
// once a connection is ready and before anything of the request is
// written to it, for HTTP/1 (Transport.getConn) and HTTP/2
// (RoundTripOpt) alike. There the caller's BeforeSend runs, once per
// delivery: the moment the request may leave, and the last before it
// does. A BeforeSend that fails, or a caller that has stopped (before it,
// or while it ran), refuses the send: the connection is closed before a
// byte of the request is on it (a closed connection writes nothing; TLS
// sends only its close alert) and the send's context is canceled, so that
// no retry of net/http's takes another. Until a send is let through,
// nothing can have reached the server (connected stays false).
//
// A send let through goes out whole: its context does not end with the
// caller's (context.WithoutCancel). A caller that stops once the send was
// let through (Ctrl-C, --timeout, the maximum wait, the MCP server
// stopping) ends the request only once net/http has written it
// (WroteRequest) and flushGrace (from the write) has let its last buffer,
// which net/http flushes right after, leave; or writeGrace after the stop, for a request
// still not written then (megabytes on a slow link, a server that does not
// read). Without that, a stop in the instant after the gate let the send
// through would close the connection with the request unwritten, or cut
// in its last buffer, while the record already says it left: sending
// then means the message goes out.
type sendGate struct {
	before func() error
	// sent is told once, when the send is let through.
	sent func()
	// stop cancels the send's context; ctx is the caller's, sctx the
	// send's.
	stop context.CancelFunc
	ctx  context.Context
	sctx context.Context
	// wrote is closed once net/http wrote the whole request, at wroteAt.
	wrote     chan struct{}
	wroteOnce sync.Once
	wroteAt   time.Time
	unwatch   func() bool

	mu      sync.Mutex
	decided bool
	// beforeErr is BeforeSend's error; stopped: the caller had stopped.
	beforeErr error
	stopped   bool
	// connected: a connection was let through, so bytes may have left.
	// It is set under mu, with decided.
	connected atomic.Bool
}

// flushGrace is how long a caller's stop waits, once net/http reported the
// request written, before it ends the request: WroteRequest comes before
// net/http flushes the last buffer of the request (up to 4 KiB), one write
// right after it. writeGrace bounds the wait for a request that is still
// being written when its caller stops.
const (
	flushGrace = 500 * time.Millisecond
	writeGrace = 3 * time.Second
)

// newSendGate returns the gate and the context the send makes its
// requests with (traced; canceled when the gate refuses), and a function
// that releases that context. sent is told once the send is let through,
// written once net/http wrote the whole request.
func newSendGate(ctx context.Context, before func() error, sent, written func()) (*sendGate, context.Context, context.CancelFunc) {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	g := &sendGate{before: before, sent: sent, stop: stop, ctx: ctx, sctx: sctx, wrote: make(chan struct{})}
	traced := httptrace.WithClientTrace(sctx, &httptrace.ClientTrace{
		GotConn: g.gotConn,
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			// A request on a connection the gate refused (closed) is
			// "written" into net/http's buffer too, and fails only at
			// the flush: it never left.
			if info.Err != nil || !g.connected.Load() {
				return
			}
			g.wroteOnce.Do(func() {
				g.wroteAt = time.Now()
				close(g.wrote)
			})
			if written != nil {
				written()
			}
		},
	})
	g.unwatch = context.AfterFunc(ctx, g.callerStopped)
	return g, traced, func() {
		g.unwatch()
		stop()
	}
}

func (g *sendGate) gotConn(info httptrace.GotConnInfo) {
	g.mu.Lock()
	first := !g.decided
	if first {
		g.decided = true
		if g.ctx.Err() != nil {
			// Stopped while connecting: nothing leaves for a caller that
			// has stopped.
			g.stopped = true
		} else if g.before != nil {
			// The record's write (JSON, the file system) goes deep: off
			// the stack of the send, which waits for the whole run.
			offStack(func() { g.beforeErr = g.before() })
			// Stopped while BeforeSend ran (while its record said the
			// message is leaving): it does not leave. The caller, told
			// NotSent, puts it back.
			g.stopped = g.beforeErr == nil && g.ctx.Err() != nil
		}
	}
	refused := g.stopped || g.beforeErr != nil
	if !refused {
		g.connected.Store(true)
	}
	g.mu.Unlock()
	if refused {
		g.stop()
		if info.Conn != nil {
			info.Conn.Close()
		}
		return
	}
	if first && g.sent != nil {
		g.sent()
	}
}

// callerStopped passes the caller's stop on to the send: at once when
// nothing was let through (a connection being made is given up; a gotConn
// still to come refuses), else once the request was written (see
// sendGate).
func (g *sendGate) callerStopped() {
	g.mu.Lock()
	if !g.decided {
		g.decided, g.stopped = true, true
	}
	through := g.connected.Load()
	g.mu.Unlock()
	if !through {
		g.stop()
		return
	}
	bound := time.NewTimer(writeGrace)
	defer bound.Stop()
	select {
	case <-g.wrote:
		// flushGrace from the write, not from the stop: a stop long after
		// it passes at once.
		flushed := time.NewTimer(time.Until(g.wroteAt.Add(flushGrace)))
		defer flushed.Stop()
		select {
		case <-flushed.C:
		case <-bound.C:
		case <-g.sctx.Done():
		}
	case <-bound.C:
	case <-g.sctx.Done():
	}
	g.stop()
}

// refusal is the error of a BeforeSend that refused the send: nil when it
// let it through or was not asked (no connection was made, or the caller
// had stopped).
func (g *sendGate) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.beforeErr
}
