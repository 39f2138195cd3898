package interoptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvBroker is the environment variable that names a broker (ServeBroker's
// URL, http://127.0.0.1:port): where it is set, StartGo and StartJS have
// the broker start their server rather than start it themselves.
const EnvBroker = "A2A_COURIER_INTEROP_BROKER"

// maxBrokered bounds the servers one broker runs at once.
const maxBrokered = 64

// brokerStartTimeout covers an npm ci or a go build on the broker's first
// request of each kind.
const brokerStartTimeout = 12 * time.Minute

// ServeBroker starts and stops the interop servers for test processes that
// cannot (see the package doc) until ctx ends, then stops every server it
// still runs. It serves on ln, which should be on loopback:
//
//	POST /servers?kind=go|js, body the bearer token the secure agent is to
//	accept: starts a fresh server, answers {"id": ..., "origin": ...} once
//	it serves.
//	DELETE /servers/{id}: stops that server, answers with the last KiB it
//	wrote to stderr.
func ServeBroker(ctx context.Context, ln net.Listener) error {
	b := &broker{procs: map[string]*brokered{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /servers", b.start)
	mux.HandleFunc("DELETE /servers/{id}", b.stop)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	err := srv.Serve(ln)
	b.stopAll()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type broker struct {
	mu    sync.Mutex
	next  int
	procs map[string]*brokered
}

type brokered struct {
	p      *proc
	stderr *tailBuffer
}

func (b *broker) start(w http.ResponseWriter, r *http.Request) {
	var k serverKind
	switch r.URL.Query().Get("kind") {
	case goKind.name:
		k = goKind
	case jsKind.name:
		k = jsKind
	default:
		http.Error(w, "kind must be go or js", http.StatusBadRequest)
		return
	}
	tok, err := io.ReadAll(io.LimitReader(r.Body, 1<<10))
	token := strings.TrimSpace(string(tok))
	if err != nil || token == "" {
		http.Error(w, "the body must be the bearer token", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	full := len(b.procs) >= maxBrokered
	b.next++
	id := strconv.Itoa(b.next)
	b.mu.Unlock()
	if full {
		http.Error(w, fmt.Sprintf("%d servers run already", maxBrokered), http.StatusServiceUnavailable)
		return
	}
	argv, err := k.command()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s, p, err := launch(k.impl, k.mounts, token, argv[0], argv[1:]...)
	if err != nil {
		if p != nil {
			p.stop()
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b.mu.Lock()
	b.procs[id] = &brokered{p: p, stderr: s.stderr}
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"id": id, "origin": s.Origin})
}

func (b *broker) stop(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b.mu.Lock()
	bp := b.procs[id]
	delete(b.procs, id)
	b.mu.Unlock()
	if bp == nil {
		http.Error(w, "no server "+id, http.StatusNotFound)
		return
	}
	bp.p.stop()
	out := bp.stderr.String()
	io.WriteString(w, out[max(0, len(out)-1<<10):])
}

func (b *broker) stopAll() {
	b.mu.Lock()
	procs := b.procs
	b.procs = map[string]*brokered{}
	b.mu.Unlock()
	for _, bp := range procs {
		bp.p.stop()
	}
}

// startBrokered has the broker start a server of kind k for this test and
// stop it when the test ends. The server's stderr is known once it stopped.
func startBrokered(t testing.TB, broker string, k serverKind) *Server {
	t.Helper()
	token := randomToken()
	ctx, cancel := context.WithTimeout(context.Background(), brokerStartTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, broker+"/servers?kind="+k.name, strings.NewReader(token))
	if err != nil {
		t.Fatalf("interoptest: %s=%q: %v", EnvBroker, broker, err)
	}
	var got struct{ ID, Origin string }
	if err := brokerCall(req, &got); err != nil {
		t.Fatalf("interoptest: the broker (%s) did not start the %s server: %v", broker, k.impl, err)
	}
	s := &Server{Impl: k.impl, Origin: got.Origin, Token: token, Mounts: k.mounts, stderr: &tailBuffer{max: 64 << 10}}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, broker+"/servers/"+got.ID, nil)
		var stderr string
		if err := brokerCall(req, &stderr); err != nil {
			t.Errorf("interoptest: the broker (%s) did not stop the %s server at %s: %v", broker, k.impl, s.Origin, err)
			return
		}
		s.stderr.Write([]byte(stderr))
		if t.Failed() {
			t.Logf("%s stderr (last KiB):\n%s", k.impl, stderr)
		}
	})
	return s
}

// brokerCall sends req and decodes a JSON answer into *out, or for a
// *string takes the body as it is.
func brokerCall(req *http.Request, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if s, ok := out.(*string); ok {
		*s = string(body)
		return nil
	}
	return json.Unmarshal(body, out)
}
