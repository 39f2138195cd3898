package cli

import (
	"net/http"

	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/httplog"
	"github.com/a2a-courier/a2a-courier/store"
)

// engine is the task engine on the state directory, built once, by the
// command's own goroutine (goroutines it starts are handed the engine). The
// worker timing comes from the environment: a value that is not a
// duration refuses a new task before it is recorded (sendMessage, and the
// engine's Submit), and is reported when a worker is needed.
func (a *App) engine() (*courier.Courier, error) {
	if a.eng != nil {
		return a.eng, nil
	}
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	timing, terr := a.workerTiming()
	a.eng = newEngine(a.p, engineParts{store: st, clients: a.httpClients(), timing: timing, timingErr: terr})
	return a.eng, nil
}

// caches is the engine for what needs no record: the clients of stored
// targets, and what it keeps beside the records (cards, what a Kibana said
// it is), which without a state directory it does not keep.
func (a *App) caches() *courier.Courier {
	if c, err := a.engine(); err == nil {
		return c
	}
	return newEngine(a.p, engineParts{clients: a.httpClients()})
}

// httpClients is the process's HTTP clients, one per TLS setting
// (courier.HTTPClients), or the one Process gives; with -v each request is
// shown on stderr (httplog: never a credential).
func (a *App) httpClients() func(store.Target) (*http.Client, error) {
	a.clientsOnce.Do(func() {
		a.clients = courier.HTTPClients(a.p.HTTPClient)
		if inner := a.clients; a.verbose {
			a.clients = func(t store.Target) (*http.Client, error) {
				hc, err := inner(t)
				if err != nil {
					return nil, err
				}
				return httplog.Wrap(hc, a.printer().logf, a.p.Now), nil
			}
		}
	})
	return a.clients
}
