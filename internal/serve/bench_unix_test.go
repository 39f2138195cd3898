//go:build unix

package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
)

// benchServer is startServer for a benchmark.
func benchServer(b *testing.B, o Options) *started {
	o.StateDir = b.TempDir()
	o.Listen = "127.0.0.1:0"
	o.RatePerMinute, o.Burst = 1e9, 1e9
	addr := make(chan string, 1)
	o.Ready = func(a string) { addr <- a }
	srv, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	a := <-addr
	b.Cleanup(func() { cancel(); <-done })
	tok, _ := os.ReadFile(filepath.Join(o.StateDir, LocalTokensName))
	return &started{srv: srv, url: "http://" + a, dir: o.StateDir, local: strings.TrimSpace(string(tok))}
}

func benchClient(b *testing.B, endpoint string, d client.Dialect, token ...string) *client.A2A {
	cfg := client.A2AConfig{Endpoint: endpoint, Dialect: d}
	if len(token) > 0 {
		cfg.Auth = client.Auth{Header: "Authorization", Prefix: "Bearer "}
		cfg.Credential = client.Secret(token[0])
	}
	c, err := client.NewA2A(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkServeSend is one short blocking message/send (A2A 0.3) to
// serve --exec cat: a task recorded twice (working, completed), a process
// started and reaped, its folder made and removed.
func BenchmarkServeSend(b *testing.B) {
	s := benchServer(b, Options{Exec: "cat"})
	c := benchClient(b, s.url+"/", client.V03, s.local)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.Send(context.Background(), client.OutgoingMessage{Text: "hi", MessageID: uuid.NewString(), ContextID: uuid.NewString(), Blocking: true}, false)
		if err != nil || res.State != "completed" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkJSServerSend is the same message/send to the @a2a-js/sdk
// server's slow agent with no delay (one artifact chunk): its task
// machinery, with no process to run.
func BenchmarkJSServerSend(b *testing.B) {
	js := interoptest.StartJS(b)
	c := benchClient(b, js.URL(interoptest.MountV03, interoptest.AgentSlow), client.V03)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.Send(context.Background(), client.OutgoingMessage{Text: "chunks=1 delay=0ms", MessageID: uuid.NewString(), ContextID: uuid.NewString(), Blocking: true}, false)
		if err != nil || res.State != "completed" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkOpenThousandTasks opens a state of 1,000 finished tasks (each
// a 1 KiB message and a 4 KiB reply) and reports the heap they hold.
func BenchmarkOpenThousandTasks(b *testing.B) {
	dir := b.TempDir()
	tasks := filepath.Join(dir, "tasks")
	os.MkdirAll(tasks, 0o700)
	now := time.Now().UTC()
	for i := 0; i < 1000; i++ {
		code := 0
		r := record{ID: "t" + strconv.Itoa(i), ContextID: uuid.NewString(), Caller: "alice", MessageID: uuid.NewString(), State: "completed",
			Created: now, Updated: now, Input: strings.Repeat("m", 1024), Reply: strings.Repeat("r", 4096), ExitCode: &code}
		bs, _ := json.Marshal(r)
		os.WriteFile(filepath.Join(tasks, r.ID+".json"), bs, 0o600)
	}
	b.ResetTimer()
	var heap uint64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tb, _, err := openTable(tasks, now, 0)
		if err != nil || tb.count() != 1000 {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(tb)
	}
	b.ReportMetric(float64(heap)/1024, "KiB-heap/1000-tasks")
}

// BenchmarkFiftyCallersAtOnce sends 50 messages at once at a concurrency
// of 1 while a run is going: 50 busy answers (503, no task) a round.
func BenchmarkFiftyCallersAtOnce(b *testing.B) {
	g := filepath.Join(b.TempDir(), "gate")
	s := benchServer(b, Options{Exec: "/bin/sh -c 'while [ ! -e " + g + " ]; do sleep 0.05; done'"})
	c := benchClient(b, s.url+"/", client.V03, s.local)
	res, err := c.Send(context.Background(), client.OutgoingMessage{Text: "hold", MessageID: uuid.NewString(), Blocking: false}, true)
	if err != nil || res.State != "working" {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.WriteFile(g, nil, 0o600) })
	// Each caller's own client with no retry: a busy answer is counted as
	// it comes.
	hc := benchClient(b, s.url+"/", client.V03, s.local)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for j := 0; j < 50; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := hc.Send(context.Background(), client.OutgoingMessage{Text: "x", MessageID: uuid.NewString(), Blocking: true}, true)
				if err == nil {
					b.Error("a send was accepted past the concurrency")
				}
			}()
		}
		wg.Wait()
	}
}
