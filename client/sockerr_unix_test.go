//go:build !windows

package client

import "syscall"

var sockCodes = []struct {
	name, class string
	code        syscall.Errno
	dialTimeout string // the message of a dial that timed out ("": the system's own words)
}{
	{"ECONNREFUSED", "refused", syscall.ECONNREFUSED, ""},
	{"EHOSTUNREACH", "no route", syscall.EHOSTUNREACH, ""},
	{"ENETUNREACH", "no route", syscall.ENETUNREACH, ""},
	{"ECONNRESET", "reset", syscall.ECONNRESET, ""},
	{"EPIPE", "reset", syscall.EPIPE, ""},
	{"ETIMEDOUT", "timeout", syscall.ETIMEDOUT, ""},
}
