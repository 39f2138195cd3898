package courier

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Courier carries tasks to agents and their replies back. Everything it
// needs from the process comes in its fields, set by the caller (the
// command line): it reads no environment, opens no terminal and prints
// nothing; what it has to say goes to Logf or comes back as values and
// typed errors.
type Courier struct {
	// Store is the state directory: records, locks, caches, the worker log.
	// Only the caches (cards, server facts) work without one.
	Store *store.Store
	// HTTPClient returns the HTTP client for a target's TLS settings: one
	// per setting and process, so that requests share connections.
	HTTPClient func(store.Target) (*http.Client, error)
	// Now is the clock records are written with.
	Now func() time.Time
	// UserAgent goes with every request.
	UserAgent string
	// Logf receives the log of the tasks this process works on (the
	// worker log); nil discards it.
	Logf func(format string, args ...any)
	// Executable and Environ are the program and the environment a worker
	// is started with (the environment minus its secrets: workerEnv).
	Executable func() (string, error)
	Environ    func() []string
	// Timing is how often a worker beats and how long a silent one counts
	// as stopped. TimingErr, when set, says that the configured timing is
	// not sound (Timing is then the default): Submit returns it before
	// anything is recorded, and ensureWorker rather than start a worker,
	// until the configuration is fixed.
	Timing    store.WorkerTiming
	TimingErr error
	// WorkingDelay is how long after the request reached the server the
	// record is written as working when no outcome came first (default
	// 100 ms).
	WorkingDelay time.Duration
	// MaxConversationBytes caps a conversation read from Kibana (0: the
	// client's default, client.DefaultMaxConversationBytes).
	MaxConversationBytes int64
	// MaxResponseBytes caps an answer or a stream event (0: the client's
	// default, client.DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// AbortGrace replaces abortGrace (tests).
	AbortGrace time.Duration

	// write replaces Handle.Update, for tests that make a write fail.
	write func(*store.Handle, func(*store.Record) error) (*store.Record, error)
}

// defaultWorkingDelay: the working state is informational (sending and
// working are recovered alike, by reading), so it may wait for an answer
// that would make it stale at once.
const defaultWorkingDelay = 100 * time.Millisecond

func (c *Courier) abortGrace() time.Duration {
	if c.AbortGrace > 0 {
		return c.AbortGrace
	}
	return abortGrace
}

func (c *Courier) workingDelay() time.Duration {
	if c.WorkingDelay > 0 {
		return c.WorkingDelay
	}
	return defaultWorkingDelay
}

func (c *Courier) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// inPlace takes a store write whose file is in place but whose directory
// could not be synced (store.ErrNotDurable) as made, and says so in the
// log: every reader sees the new file, and saying it was not written would
// contradict the disk. Any other error comes back as it is.
func (c *Courier) inPlace(err error) error {
	if err != nil && store.InPlace(err) {
		c.logf("%v; going on as written", err)
		return nil
	}
	return err
}

func (c *Courier) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Errors callers branch on.
var (
	// ErrHandedOff means this process stopped working on a task before its
	// end (its wait ran out, a signal): the record keeps its state, and a
	// worker carries on, by reading once the message has left.
	ErrHandedOff = errors.New("handed off")
)

// errCancelRequested is the cause of a task's context ended by cancel.
var errCancelRequested = errors.New("cancel requested")

// RecordWriteError means a task's outcome is known but could not be
// written to its record: Run returns the outcome all the same.
type RecordWriteError struct{ Err error }

func (e *RecordWriteError) Error() string {
	return "the outcome could not be written to the task record: " + e.Err.Error()
}

func (e *RecordWriteError) Unwrap() error { return e.Err }

// HTTPClients returns the HTTP client factory of a process: one shared
// client per TLS setting, so that send's card read and its POST share a
// connection (one TLS handshake, not two), and a worker serving many tasks
// reuses connections. A given client (tests) replaces them all.
func HTTPClients(given *http.Client) func(store.Target) (*http.Client, error) {
	var mu sync.Mutex
	cache := map[string]*http.Client{}
	return func(t store.Target) (*http.Client, error) {
		if given != nil {
			return given, nil
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

// Kibana is the Agent Builder client of a stored target, with key.
func (c *Courier) Kibana(t store.Target, key client.Secret) (*client.Kibana, error) {
	hc, err := c.HTTPClient(t)
	if err != nil {
		return nil, err
	}
	return client.NewKibana(client.KibanaConfig{URL: t.URL, Space: t.Space, APIKey: key, HTTPClient: hc, UserAgent: c.UserAgent,
		MaxConversationBytes: c.MaxConversationBytes})
}

// A2A is the client of a stored generic target, with key, in the binding
// the target was sent with (JSON-RPC for records before bindings).
func (c *Courier) A2A(t store.Target, key client.Secret) (*client.A2A, error) {
	hc, err := c.HTTPClient(t)
	if err != nil {
		return nil, err
	}
	return client.NewA2A(client.A2AConfig{Endpoint: t.Endpoint, Dialect: client.Dialect(t.Dialect), Tenant: t.Tenant, Binding: client.Binding(t.Binding),
		Auth: client.Auth{Header: t.AuthHeader, Prefix: t.AuthPrefix}, Credential: key, HTTPClient: hc, UserAgent: c.UserAgent, MaxResponseBytes: c.MaxResponseBytes})
}
