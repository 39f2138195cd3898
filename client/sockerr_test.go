package client

import (
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// Each socket error the system gives (sockCodes: Unix's errnos, or
// Windows' WSAE* and Win32 codes) gets the same kind and message as on
// Unix, at the dial and after it.
func TestSocketErrorsOfTheSystem(t *testing.T) {
	t.Parallel()
	wrap := func(op, syscallName string, code syscall.Errno) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/x", Err: &net.OpError{Op: op, Net: "tcp",
			Err: &os.SyscallError{Syscall: syscallName, Err: code}}}
	}
	for _, c := range sockCodes {
		dial := classifyTransportError("list agents", wrap("dial", "connect", c.code))
		read := classifyTransportError("list agents", wrap("read", "read", c.code))
		want := map[string][2]struct {
			kind Kind
			msg  string
		}{
			"refused":  {{KindUnreachable, "connection refused"}, {KindUnreachable, "connection refused"}},
			"no route": {{KindUnreachable, "no route to host"}, {KindUnreachable, "no route to host"}},
			"reset":    {{KindUnreachable, ""}, {KindConnection, "the server closed the connection before answering"}},
			"timeout":  {{KindUnreachable, c.dialTimeout}, {KindConnection, "timed out waiting for the server"}},
		}[c.class]
		for i, got := range []*Error{dial, read} {
			if got.Kind != want[i].kind || want[i].msg != "" && got.Message != want[i].msg {
				t.Errorf("%s (%d, %s) at %s: %s %q, want %s %q", c.name, c.code, c.class, []string{"dial", "read"}[i],
					got.Kind, got.Message, want[i].kind, want[i].msg)
			}
		}
		if !MayHaveArrived(read) && c.class == "reset" {
			t.Errorf("%s: a reset connection is not 'may have arrived'", c.name)
		}
	}
}
