package client

import (
	"context"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// sendGate stands between a delivery's send and the server: net/http calls
// its gotConn (httptrace GotConn) on the goroutine that makes the request,
// once a connection is ready and before anything of the request is
// written to it, for HTTP/1 (Transport.getConn) and HTTP/2
// (RoundTripOpt) alike. There the caller's BeforeSend runs, once per
// delivery: the moment the request may leave, and the last before it
// does. A BeforeSend that fails, or a caller that has stopped, refuses the
// send: the connection is closed before a byte of the request is on it
// (a closed connection writes nothing; TLS sends only its close alert)
// and the send's context is canceled, so that no retry of net/http's
// takes another. Until a send is let through, nothing can have reached
// the server (connected stays false).
type sendGate struct {
	before func() error
	// stop cancels the send's context.
	stop context.CancelFunc
	ctx  context.Context

	mu      sync.Mutex
	decided bool
	// beforeErr is BeforeSend's error; stopped: the caller had stopped.
	beforeErr error
	stopped   bool
	// connected: a connection was let through, so bytes may have left.
	connected atomic.Bool
}

// newSendGate returns the gate and the context the send makes its
// requests with (traced; canceled when the gate refuses), and a function
// that releases that context.
func newSendGate(ctx context.Context, before func() error, written func()) (*sendGate, context.Context, context.CancelFunc) {
	sctx, stop := context.WithCancel(ctx)
	g := &sendGate{before: before, stop: stop, ctx: ctx}
	traced := httptrace.WithClientTrace(sctx, &httptrace.ClientTrace{
		GotConn: g.gotConn,
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil && written != nil {
				written()
			}
		},
	})
	return g, traced, stop
}

func (g *sendGate) gotConn(info httptrace.GotConnInfo) {
	g.mu.Lock()
	if !g.decided {
		g.decided = true
		switch {
		case g.ctx.Err() != nil:
			// Stopped while connecting: nothing leaves for a caller that
			// has stopped.
			g.stopped = true
		case g.before != nil:
			g.beforeErr = g.before()
		}
	}
	refused := g.stopped || g.beforeErr != nil
	g.mu.Unlock()
	if refused {
		g.stop()
		if info.Conn != nil {
			info.Conn.Close()
		}
		return
	}
	g.connected.Store(true)
}

// refusal is the error of a BeforeSend that refused the send: nil when it
// let it through or was not asked (no connection was made, or the caller
// had stopped).
func (g *sendGate) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.beforeErr
}
