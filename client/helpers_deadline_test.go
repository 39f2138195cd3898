package client

import (
	"context"
	"testing"
	"time"
)

// deadline is a context that ends d after the (sub)test that asks for it
// starts running: a parallel subtest's own, never its parent's, which
// starts counting while the subtest still waits for its turn (under load,
// the parent's 60 s ran out before some subtests began: "timed out waiting
// for the server" in 0.00 s).
func deadline(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
