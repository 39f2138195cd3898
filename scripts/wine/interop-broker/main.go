// Command interop-broker starts the interop tests' a2a-go and @a2a-js/sdk
// servers on this host for test binaries that cannot start them
// themselves: a windows test binary under Wine cannot run the Linux go and
// node. scripts/wine/go-test runs it and hands its URL to the tests in
// A2A_COURIER_INTEROP_BROKER (see client/interop/interoptest).
//
// It listens on a free loopback port, prints its URL as the first line on
// stdout, and runs until SIGINT or SIGTERM, or until its standard input
// ends (so that it does not outlive the script that started it), then
// stops every server it started. Run it from within the repository: it
// finds client/interop from its working directory.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop-broker:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	if err := interoptest.ServeBroker(ctx, ln); err != nil {
		fmt.Fprintln(os.Stderr, "interop-broker:", err)
		os.Exit(1)
	}
}
