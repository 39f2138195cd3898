package serve

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/a2a-courier/a2a-courier/client/wire"
)

// streamOrError answers a streaming method: an error as a single JSON-RPC
// (or HTTP+JSON) answer, or the task's events over SSE until it ends.
// id is nil for HTTP+JSON, whose events are bare StreamResponses.
func (s *Server) streamOrError(w http.ResponseWriter, r *http.Request, id json.RawMessage, d wire.Dialect, snap snapshot, e *apiError, _ bool) {
	if e != nil {
		if id == nil {
			writeREST(w, nil, e)
		} else {
			writeRPC(w, id, d, nil, e)
		}
		return
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	emit := func(ev map[string]any) bool {
		if ev == nil {
			_, err := w.Write([]byte(": keep-alive\n\n"))
			if fl != nil {
				fl.Flush()
			}
			return err == nil
		}
		var b []byte
		if id == nil {
			b, _ = json.Marshal(ev)
		} else {
			b, _ = json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: ev})
		}
		if _, err := w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	s.follow(r, d, snap, emit)
}

// follow emits the task, then a status update for each new status line
// while it works, then its artifacts and its last status (0.3: final),
// and returns; or returns when the client leaves. A client that leaves
// changes nothing: the task goes on, and is read or subscribed to again.
func (s *Server) follow(r *http.Request, d wire.Dialect, snap snapshot, emit func(map[string]any) bool) {
	caller, id := snap.rec.Caller, snap.rec.ID
	c := make(chan struct{}, 1)
	stop := s.tasks.watch(id, c)
	defer stop()
	if now, ok := s.tasks.get(caller, id); ok {
		snap = now
	}
	t := s.wireTask(snap)
	if wire.Terminal(snap.rec.State) {
		emit(wire.Wrap(d, "task", wire.EncodeTask(d, t, -1)))
		emit(wire.EncodeStatusUpdate(d, t, true))
		return
	}
	noArtifacts := t
	noArtifacts.Artifacts = nil
	if !emit(wire.Wrap(d, "task", wire.EncodeTask(d, noArtifacts, -1))) {
		return
	}
	last := snap.status
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			// An SSE comment keeps proxies from closing an idle stream.
			if !emit(nil) {
				return
			}
			continue
		case <-c:
		}
		now, ok := s.tasks.get(caller, id)
		if !ok {
			return
		}
		t = s.wireTask(now)
		if wire.Terminal(now.rec.State) {
			for _, a := range t.Artifacts {
				emit(wire.EncodeArtifactUpdate(d, t, a))
			}
			emit(wire.EncodeStatusUpdate(d, t, true))
			return
		}
		if now.status != last {
			last = now.status
			if !emit(wire.EncodeStatusUpdate(d, t, false)) {
				return
			}
		}
	}
}
