package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// granted reports whether the call in ch returned, and with no error,
// within 5 s: a grant that is due (a loaded machine may take long to run
// the goroutine, and a short wait failed the test there).
func granted(ch <-chan error) bool {
	select {
	case err := <-ch:
		return err == nil
	case <-time.After(5 * time.Second):
		return false
	}
}

// pending reports whether the call in ch is still waiting after a short
// while: a grant that is not due (a wrong one comes at once).
func pending(ch <-chan error) bool {
	select {
	case <-ch:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

func growAsync(l *lease, n int64) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- l.grow(context.Background(), n) }()
	return ch
}

func TestReadBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a read larger than the budget runs alone", func(t *testing.T) {
		t.Parallel()
		b := NewReadBudget(100)
		small := b.lease()
		if err := small.grow(ctx, 10); err != nil {
			t.Fatal(err)
		}
		big := b.lease()
		done := growAsync(big, 1000)
		if !pending(done) {
			t.Fatal("the large read went on beside another")
		}
		small.release()
		if !granted(done) || big.holding() != 100 || b.InUse() != 100 {
			t.Fatalf("the large read did not get the whole budget: holds %d, in use %d", big.holding(), b.InUse())
		}
		big.release()
		if b.InUse() != 0 {
			t.Fatalf("in use %d after every release", b.InUse())
		}
	})
	t.Run("first reservations are served in order", func(t *testing.T) {
		t.Parallel()
		b := NewReadBudget(100)
		a := b.lease()
		a.grow(ctx, 60)
		big := growAsync(b.lease(), 80)
		time.Sleep(10 * time.Millisecond)
		// 30 would fit beside a, but the large read came first.
		if !pending(growAsync(b.lease(), 30)) {
			t.Fatal("a later read went before a waiting one")
		}
		a.release()
		if !granted(big) {
			t.Fatal("the waiting read was not served")
		}
	})
	t.Run("reads holding bytes that all wait are let through", func(t *testing.T) {
		t.Parallel()
		b := NewReadBudget(100)
		x, y := b.lease(), b.lease()
		x.grow(ctx, 50)
		y.grow(ctx, 50)
		gx, gy := growAsync(x, 80), growAsync(y, 80)
		// Without the rule both would wait for the other forever.
		var okx, oky bool
		select {
		case err := <-gx:
			okx = err == nil
		case err := <-gy:
			oky = err == nil
		case <-time.After(5 * time.Second):
		}
		if !okx && !oky {
			t.Fatal("deadlock: neither growing read went on")
		}
		if okx {
			x.release()
		} else {
			y.release()
		}
		if !okx && !granted(gx) || !oky && !granted(gy) {
			t.Fatal("the other read did not go on once budget was freed")
		}
	})
	t.Run("a wait ends with its context", func(t *testing.T) {
		t.Parallel()
		b := NewReadBudget(100)
		a := b.lease()
		a.grow(ctx, 100)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		w := b.lease()
		if err := w.grow(cctx, 10); !errors.Is(err, context.DeadlineExceeded) || w.holding() != 0 {
			t.Fatalf("got %v holding %d, want the deadline and nothing held", err, w.holding())
		}
		next := growAsync(b.lease(), 10)
		a.release()
		if !granted(next) {
			t.Fatal("a read queued after a canceled one was not served")
		}
	})
	t.Run("a nil lease holds nothing", func(t *testing.T) {
		t.Parallel()
		var l *lease
		if err := l.grow(ctx, 1<<40); err != nil || l.holding() != 0 {
			t.Fatal(err)
		}
		l.release()
	})
}
