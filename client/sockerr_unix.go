//go:build !windows

package client

import (
	"errors"
	"syscall"
)

// The socket errors classifyTransportError tells apart, as the system
// names them (sockerr_windows.go has Windows' codes).

// refused: nothing listens on the port (ECONNREFUSED).
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// noRoute: no route to the host or its network.
func noRoute(err error) bool {
	return errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// connectionLost: the server reset or closed the connection under us.
func connectionLost(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// timedOut: the system gave up waiting for the other end. On Unix
// ETIMEDOUT is a net.Error whose Timeout() says so, which
// classifyTransportError already asks.
func timedOut(error) bool { return false }
