package cli

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/store"
)

// engine is the task engine on the state directory, built once, by the
// command's own goroutine (goroutines it starts are handed the engine). The
// worker timing comes from the environment: a value that is not a
// duration is reported when a worker is needed.
func (a *App) engine() (*courier.Courier, error) {
	if a.eng != nil {
		return a.eng, nil
	}
	st, err := a.openStore()
	if err != nil {
		return nil, err
	}
	timing, terr := a.workerTiming()
	a.eng = &courier.Courier{Store: st, HTTPClient: a.httpClients(), Now: a.p.Now, UserAgent: userAgent(),
		Executable: a.p.Executable, Environ: a.p.Environ, Timing: timing, TimingErr: terr}
	return a.eng, nil
}

// caches is the engine for what needs no record: the clients of stored
// targets, and what it keeps beside the records (cards, what a Kibana said
// it is), which without a state directory it does not keep.
func (a *App) caches() *courier.Courier {
	if c, err := a.engine(); err == nil {
		return c
	}
	return &courier.Courier{HTTPClient: a.httpClients(), Now: a.p.Now, UserAgent: userAgent()}
}

// httpClients returns a function that gives one shared HTTP client per TLS
// setting, the same for the whole process: send's card read and its POST
// share a connection (one TLS handshake, not two), and a worker serving
// many tasks reuses connections.
func (a *App) httpClients() func(store.Target) (*http.Client, error) {
	a.clientsOnce.Do(func() { a.clients = a.newHTTPClients() })
	return a.clients
}

func (a *App) newHTTPClients() func(store.Target) (*http.Client, error) {
	var mu sync.Mutex
	cache := map[string]*http.Client{}
	return func(t store.Target) (*http.Client, error) {
		if a.p.HTTPClient != nil {
			return a.p.HTTPClient, nil
		}
		key := fmt.Sprintf("%s\x00%v", t.CAFile, t.Insecure)
		mu.Lock()
		defer mu.Unlock()
		if c := cache[key]; c != nil {
			return c, nil
		}
		tlsCfg, err := client.TLSConfig(t.CAFile, t.Insecure)
		if err != nil {
			return nil, err
		}
		c := client.NewHTTPClient(tlsCfg)
		cache[key] = c
		return c, nil
	}
}
