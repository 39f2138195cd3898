package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// cutProxy forwards to origin and cuts the first event stream after n
// bytes, as a proxy giving up on a long response does.
func cutProxy(t *testing.T, origin string, n int) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(origin)
	var cut atomic.Bool
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") && cut.CompareAndSwap(false, true) {
			resp.Body = &cutBody{r: resp.Body, left: n}
		}
		return nil
	}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) { panic(http.ErrAbortHandler) }
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv
}

type cutBody struct {
	r    io.ReadCloser
	left int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("cut by the proxy")
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	return n, err
}

func (b *cutBody) Close() error { return b.r.Close() }

// TestStreamCutIsResumedNotResent cuts a streamed task in the middle and
// checks that the whole reply comes back, every chunk, from real SDK
// servers, by subscribing again or polling, with one task on the server.
func TestStreamCutIsResumedNotResent(t *testing.T) {
	t.Parallel()
	gos, js := interoptest.StartGo(t), interoptest.StartJS(t)
	for _, tc := range []struct {
		name  string
		srv   *interoptest.Server
		mount string
	}{
		{"a2a-go", gos, interoptest.MountGo},
		{"a2a-js v1.0", js, interoptest.MountV1},
		{"a2a-js v0.3", js, interoptest.MountV03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proxy := cutProxy(t, tc.srv.Origin, 700)
			base := strings.Replace(tc.srv.URL(tc.mount, interoptest.AgentSlow), tc.srv.Origin, proxy.URL, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ra, err := ResolveAgent(ctx, nil, base, "test")
			if err != nil {
				t.Fatal(err)
			}
			if !ra.Streaming {
				t.Fatal("the slow agent should stream")
			}
			// The card names the server's own origin; go through the proxy.
			ep := strings.Replace(ra.Endpoint, tc.srv.Origin, proxy.URL, 1)
			ep = strings.Replace(ep, strings.Replace(tc.srv.Origin, "127.0.0.1", "localhost", 1), proxy.URL, 1)
			c, err := NewA2A(A2AConfig{Endpoint: ep, Dialect: ra.Dialect, Tenant: ra.Tenant})
			if err != nil {
				t.Fatal(err)
			}
			var events []string
			out := c.Deliver(ctx, A2ADeliverOptions{
				Message:      OutgoingMessage{Text: "chunks=8 delay=100ms", MessageID: "m-" + tc.name, ContextID: "ctx-" + strings.ReplaceAll(tc.name, " ", "-")},
				Send:         true,
				Streaming:    true,
				PollInterval: 100 * time.Millisecond,
				OnEvent:      func(e Event) { events = append(events, string(e.Kind)) },
			})
			// Every chunk, then the final status message: the whole answer.
			want := "chunk 1/8\nchunk 2/8\nchunk 3/8\nchunk 4/8\nchunk 5/8\nchunk 6/8\nchunk 7/8\nchunk 8/8\ndone after 8 chunks"
			if out.State != StateCompleted || out.Reply != want {
				t.Fatalf("state %q reply %q (events %v, err %v)", out.State, out.Reply, events, out.Err)
			}
			if !strings.Contains(strings.Join(events, ","), "connection_lost") {
				t.Errorf("the stream was not cut: events %v", events)
			}
		})
	}
}
