package interoptest

import (
	"path/filepath"
	"testing"
)

// The SDKs' own clients, for tests of a server of ours (`a2a-courier
// serve`): client/interop/goserver/sdkclient (a2a-go v0.3.3's a2aclient,
// A2A 0.3 over JSON-RPC) and client/interop/jsserver/sdkclient.mjs
// (@a2a-js/sdk 1.3.0's ClientFactory, A2A 1.0 and 0.3, JSON-RPC and
// HTTP+JSON). Each takes --url and the bearer token in $A2A_SDK_TOKEN,
// runs send, stream, get, (list,) cancel and subscribe, and prints a JSON
// line a step.

var goClient once

// GoClientCommand builds the a2a-go client (once per test process) and
// returns the command that runs it.
func GoClientCommand(t testing.TB) []string {
	t.Helper()
	skipIfDisabled(t)
	bin, err := goClient.get(buildGoClient)
	if err != nil {
		t.Fatalf("interoptest: build the a2a-go client: %v", err)
	}
	return []string{bin}
}

// JSClientCommand installs the a2a-js SDK (as StartJS does) and returns
// the command that runs its client.
func JSClientCommand(t testing.TB) []string {
	t.Helper()
	skipIfDisabled(t)
	node, err := jsServer.get(installJSServer)
	if err != nil {
		t.Fatalf("interoptest: install the @a2a-js/sdk: %v", err)
	}
	dir, err := interopDir()
	if err != nil {
		t.Fatal(err)
	}
	return []string{node, filepath.Join(dir, "jsserver", "sdkclient.mjs")}
}

func buildGoClient() (string, error) { return buildGoModule("sdkclient", "./sdkclient") }
