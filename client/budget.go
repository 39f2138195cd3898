package client

import (
	"context"
	"runtime"
	"slices"
	"sync"
)

// DefaultReadBudgetBytes is the capacity of the budget that clients share
// when configured without one: what the response reads of one process hold
// at once, compressed and decoded bytes together. A worker serves up to
// hundreds of tasks as goroutines of one process, each reading its
// conversation. A hundred pending tasks take about 20 MiB of RSS
// (docs/performance.md) of their 64 MiB target; 16 MiB in flight, with
// the garbage the collector lets grow beside it, keeps them within it even
// when every answer is a decompression bomb (a hundred concurrent bomb
// reads grew the heap by about 40 MiB, TestConcurrentBombsStayWithinTheBudget).
// Ordinary answers (a 10 MB conversation is 1.7 MB of gzip) are read beside
// others; a larger read (a 100 MB conversation) takes the whole budget and
// runs alone.
const DefaultReadBudgetBytes int64 = 16 << 20

// ReadBudget bounds the bytes that the response reads sharing it hold at
// once: a body's size is reserved before its buffer is allocated (from
// Content-Length, or for gzip from the trailer's length once the
// compressed body is in), or chunk by chunk as a body of unknown length
// grows. A read that cannot get its bytes waits, as long as its context
// lets it, and never fails for want of budget. A read larger than the
// whole budget waits until it can hold all of it, then runs alone.
//
// The bytes are held while the body is read, decoded and validated; the
// document handed to the caller is the caller's (a conversation is kept
// only while its round is found). Reads that wait for a first reservation
// are served in order; a read already holding bytes that needs more is
// served first, since finishing it frees budget. If every read holding
// bytes waits for more (they would wait forever), the first to notice is
// let through, over the capacity for the time of that read.
//
// One ReadBudget is meant to be shared by every client of a process (see
// SharedReadBudget); the zero value is not usable.
type ReadBudget struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	holders  int      // leases holding bytes
	stuck    int      // of them, waiting for more
	queue    []uint64 // tickets of the reads waiting for a first reservation, in order
	ticket   uint64
	changed  chan struct{} // closed and replaced whenever a waiter may go on
}

// NewReadBudget returns a budget of the given capacity in bytes; zero or
// less means DefaultReadBudgetBytes.
func NewReadBudget(capacity int64) *ReadBudget {
	if capacity <= 0 {
		capacity = DefaultReadBudgetBytes
	}
	return &ReadBudget{capacity: capacity, changed: make(chan struct{})}
}

var sharedReadBudget = NewReadBudget(DefaultReadBudgetBytes)

// SharedReadBudget returns the budget of every client configured without
// one (KibanaConfig.ReadBudget, A2AConfig.ReadBudget): one per process.
func SharedReadBudget() *ReadBudget { return sharedReadBudget }

// Capacity returns the budget's capacity in bytes.
func (b *ReadBudget) Capacity() int64 { return b.capacity }

// InUse returns the bytes the reads sharing the budget hold now.
func (b *ReadBudget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// wake lets every waiter look again; b.mu is held.
func (b *ReadBudget) wake() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// lease is what one read holds of a budget. A nil *lease holds nothing and
// never waits (reads of a few KiB, such as error bodies, and tests).
type lease struct {
	b    *ReadBudget
	held int64
	peak int64 // the most held at once, for tests
}

func (b *ReadBudget) lease() *lease {
	if b == nil {
		return nil
	}
	return &lease{b: b}
}

// holding returns the bytes the lease holds (under the budget's lock:
// another goroutine may be growing it).
func (l *lease) holding() int64 {
	if l == nil {
		return 0
	}
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	return l.held
}

// grow makes the lease hold n bytes in all (at most the budget's
// capacity), waiting until they are free or ctx ends.
func (l *lease) grow(ctx context.Context, n int64) error {
	if l == nil {
		return nil
	}
	b := l.b
	alone := n > b.capacity
	n = min(n, b.capacity)
	if n <= l.held {
		return nil
	}
	if err := l.wait(ctx, n); err != nil {
		return err
	}
	if alone {
		// Earlier reads may have been as large, and their documents
		// garbage by now: with the collector's usual pacing the new buffer
		// would be allocated beside them (ten reads of a 250 MiB body
		// peaked at 517 MiB RSS, 266 MiB with this). A collection first
		// frees them; it costs a few milliseconds, once per read larger
		// than the whole budget.
		runtime.GC()
	}
	return nil
}

// wait reserves up to n bytes in all for the lease, as grow describes.
func (l *lease) wait(ctx context.Context, n int64) error {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	fresh := l.held == 0
	var ticket uint64
	if fresh {
		b.ticket++
		ticket = b.ticket
		b.queue = append(b.queue, ticket)
	} else {
		b.stuck++
	}
	for {
		need := n - l.held
		var ok bool
		if fresh {
			ok = b.queue[0] == ticket && b.used+need <= b.capacity
		} else {
			ok = b.used+need <= b.capacity || b.stuck == b.holders
		}
		if ok {
			break
		}
		changed := b.changed
		b.mu.Unlock()
		var err error
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-changed:
		}
		b.mu.Lock()
		if err != nil {
			if fresh {
				b.queue = slices.DeleteFunc(b.queue, func(t uint64) bool { return t == ticket })
			} else {
				b.stuck--
			}
			b.wake()
			return err
		}
	}
	if fresh {
		b.queue = b.queue[1:]
		b.holders++
	} else {
		b.stuck--
	}
	b.used += n - l.held
	l.held = n
	l.peak = max(l.peak, n)
	b.wake()
	return nil
}

// shrink makes the lease hold at most n bytes, giving the rest back.
func (l *lease) shrink(n int64) {
	if l == nil || n >= l.held {
		return
	}
	n = max(n, 0)
	b := l.b
	b.mu.Lock()
	b.used -= l.held - n
	if n == 0 {
		b.holders--
	}
	l.held = n
	b.wake()
	b.mu.Unlock()
}

// release gives back everything the lease holds.
func (l *lease) release() { l.shrink(0) }
