package client

import (
	"errors"

	"golang.org/x/sys/windows"
)

// The socket errors classifyTransportError tells apart, with Windows'
// codes: Winsock's WSAE* (what connect, send and recv return) and the
// Win32 errors an overlapped socket operation can end with. Go's
// syscall.ECONNREFUSED and its like are numbers of Go's own on Windows,
// which no Windows call returns, and Errno.Is does not map the WSAE codes
// to them: errors.Is(err, syscall.ECONNREFUSED) is false for a refused
// connection there.

func isErrno(err error, codes ...windows.Errno) bool {
	for _, c := range codes {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}

// refused: nothing listens on the port.
func refused(err error) bool {
	return isErrno(err, windows.WSAECONNREFUSED, windows.ERROR_CONNECTION_REFUSED)
}

// noRoute: no route to the host or its network.
func noRoute(err error) bool {
	return isErrno(err, windows.WSAEHOSTUNREACH, windows.WSAENETUNREACH, windows.ERROR_HOST_UNREACHABLE, windows.ERROR_NETWORK_UNREACHABLE)
}

// connectionLost: the server reset or aborted the connection under us
// (ERROR_NETNAME_DELETED is how an overlapped receive on a reset
// connection ends).
func connectionLost(err error) bool {
	return isErrno(err, windows.WSAECONNRESET, windows.WSAECONNABORTED, windows.ERROR_NETNAME_DELETED, windows.ERROR_CONNECTION_ABORTED)
}

// timedOut: the system gave up waiting for the other end (WSAETIMEDOUT:
// the connect or the connection timed out). Unlike Unix's ETIMEDOUT, Go
// does not count it a timeout (Errno.Timeout).
func timedOut(err error) bool { return isErrno(err, windows.WSAETIMEDOUT) }
