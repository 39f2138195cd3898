package client

import (
	"syscall"

	"golang.org/x/sys/windows"
)

var sockCodes = []struct {
	name, class string
	code        syscall.Errno
	dialTimeout string // the message of a dial that timed out ("": the system's own words)
}{
	{"WSAECONNREFUSED", "refused", windows.WSAECONNREFUSED, ""},
	{"ERROR_CONNECTION_REFUSED", "refused", windows.ERROR_CONNECTION_REFUSED, ""},
	{"WSAEHOSTUNREACH", "no route", windows.WSAEHOSTUNREACH, ""},
	{"WSAENETUNREACH", "no route", windows.WSAENETUNREACH, ""},
	{"ERROR_HOST_UNREACHABLE", "no route", windows.ERROR_HOST_UNREACHABLE, ""},
	{"ERROR_NETWORK_UNREACHABLE", "no route", windows.ERROR_NETWORK_UNREACHABLE, ""},
	{"WSAECONNRESET", "reset", windows.WSAECONNRESET, ""},
	{"WSAECONNABORTED", "reset", windows.WSAECONNABORTED, ""},
	{"ERROR_NETNAME_DELETED", "reset", windows.ERROR_NETNAME_DELETED, ""},
	{"ERROR_CONNECTION_ABORTED", "reset", windows.ERROR_CONNECTION_ABORTED, ""},
	{"WSAETIMEDOUT", "timeout", windows.WSAETIMEDOUT, "no connection in time (the host does not answer)"},
}
