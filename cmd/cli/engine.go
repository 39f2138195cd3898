package cli

import (
	"net/http"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/httplog"
	"github.com/a2a-courier/a2a-courier/store"
)

// engines are a command line's task engine, on its state directory, and
// its HTTP clients: built once, by the command's own goroutine
// (goroutines it starts are handed the engine).
type engines struct {
	p *Process
	// verbose shows the requests on stderr (-v), through printer.
	verbose *bool
	printer func() *printer

	clientsOnce sync.Once
	clients     func(store.Target) (*http.Client, error)
	eng         *courier.Courier
}

// engine is the task engine on the state directory. The worker timing
// comes from the environment: a value that is not a duration refuses a
// new task before it is recorded (sendOptions.message, and the engine's Submit),
// and is reported when a worker is needed.
func (e *engines) engine() (*courier.Courier, error) {
	if e.eng != nil {
		return e.eng, nil
	}
	st, err := e.openStore()
	if err != nil {
		return nil, err
	}
	timing, terr := e.workerTiming()
	e.eng = newEngine(e.p, engineParts{store: st, clients: e.httpClients(), timing: timing, timingErr: terr})
	return e.eng, nil
}

// caches is the engine for what needs no record: the clients of stored
// targets, and what it keeps beside the records (cards, what a Kibana said
// it is), which without a state directory it does not keep.
func (e *engines) caches() *courier.Courier {
	if c, err := e.engine(); err == nil {
		return c
	}
	return newEngine(e.p, engineParts{clients: e.httpClients()})
}

// httpClients is the process's HTTP clients, one per TLS setting
// (courier.HTTPClients), or the one Process gives; with -v each request is
// shown on stderr (httplog: never a credential).
func (e *engines) httpClients() func(store.Target) (*http.Client, error) {
	e.clientsOnce.Do(func() {
		e.clients = courier.HTTPClients(e.p.HTTPClient)
		if inner := e.clients; *e.verbose {
			e.clients = func(t store.Target) (*http.Client, error) {
				hc, err := inner(t)
				if err != nil {
					return nil, err
				}
				return httplog.Wrap(hc, e.printer().logf, e.p.Now), nil
			}
		}
	})
	return e.clients
}

// openStore opens the state directory (making it when missing).
func (e *engines) openStore() (*store.Store, error) {
	dir, _ := config.StateDir(e.p.getenv)
	if dir == "" {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a private directory", "cannot find a state directory: %v", config.NoStateDir(e.p.getenv))
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, configErr("set A2A_COURIER_STATE_DIR to a directory you can write", "%s", err.Error())
	}
	return st, nil
}

// defaultWorkerStaleAfter is how long a worker may be silent before it
// counts as stopped: ten of its beats (workerTiming).
const defaultWorkerStaleAfter = 10 * time.Second

// workerTiming is how often a worker beats its lock and how long a silence
// means it has stopped: A2A_COURIER_WORKER_STALE_AFTER (default 10s), and
// ten beats in that time, one a second at most.
func (e *engines) workerTiming() (store.WorkerTiming, error) {
	stale := defaultWorkerStaleAfter
	var err error
	if v := e.p.getenv("A2A_COURIER_WORKER_STALE_AFTER"); v != "" {
		if d, perr := time.ParseDuration(v); perr == nil && d > 0 {
			stale = d
		} else {
			err = configErr(config.DurationHint(v), "A2A_COURIER_WORKER_STALE_AFTER=%q is not a positive duration", v)
		}
	}
	beat := min(max(stale/10, 10*time.Millisecond), time.Second)
	return store.WorkerTiming{Beat: beat, StaleAfter: stale}, err
}
