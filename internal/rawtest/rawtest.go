// Package rawtest serves raw bytes on loopback for tests: a server that
// speaks as no net/http server would (a header that never ends, a body cut
// short, a proxy's answer to CONNECT).
package rawtest

import (
	"net"
	"testing"
)

// Serve listens on a loopback port until the test ends and hands each
// connection it accepts to serve, on a goroutine of its own, closing the
// connection when serve returns. It returns the address, host:port.
func Serve(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}
