package client

import (
	"errors"
	"strings"
	"testing"
)

// endless is a body that never ends and never sends a line end.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadSSEEndlessLine checks that a line without an end is refused once
// it passes the cap, having read little more than the cap: readSSE used
// to gather the whole line first, so such a body grew without bound.
func TestReadSSEEndlessLine(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"data: ", ": ", "event: ", "x"} {
		body := &endless{}
		const max = 1 << 20
		err := readSSE(strings.NewReader(prefix), max, nil)
		if !errors.Is(err, errStreamCut) {
			t.Fatalf("%q alone: got %v, want errStreamCut", prefix, err)
		}
		err = readSSE(&prefixed{prefix: prefix, r: body}, max, func(string, string) (bool, error) {
			t.Fatal("no event can be dispatched")
			return false, nil
		})
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindProtocol {
			t.Fatalf("%q: got %v, want the size cap error", prefix, err)
		}
		if limit := int64(max + sseLineSlack + 128<<10); body.n > limit {
			t.Errorf("%q: read %d bytes before refusing, want at most %d", prefix, body.n, limit)
		}
	}
}

type prefixed struct {
	prefix string
	r      *endless
}

func (p *prefixed) Read(b []byte) (int, error) {
	if p.prefix != "" {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.r.Read(b)
}
