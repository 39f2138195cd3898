package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// granted reports whether the call in ch returned within a short wait.
func granted(ch <-chan error) bool {
	select {
	case err := <-ch:
		return err == nil
	case <-time.After(50 * time.Millisecond):
		return false
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
		if granted(done) {
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
		if granted(growAsync(b.lease(), 30)) {
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
		okx, oky := granted(gx), granted(gy)
		if !okx && !oky {
			t.Fatal("deadlock: neither growing read went on")
		}
		if okx {
			x.release()
		} else {
			y.release()
		}
		if !granted(gx) && !okx || !granted(gy) && !oky {
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
