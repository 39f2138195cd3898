package courier

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// BenchmarkWorkerHeldSends: what a worker's pending task costs while its
// blocking send is held open (Kibana 9.5's path): 300 tasks queued, served
// by one in-process worker until every run is going on; then, after two
// collections, goroutines and stack and heap bytes per task beside the
// process before the worker began. The simulator runs in this process:
// its goroutines for each open request (the handler, the run) are counted
// too, so compare runs of this benchmark (scripts/bench's scale section
// measures the worker process alone).
//
//	go test ./internal/courier -run '^$' -bench BenchmarkWorkerHeldSends -benchtime 1x -count 3
func BenchmarkWorkerHeldSends(b *testing.B) {
	const n = 300
	for range b.N {
		sim := startSim(b, func(o *agentbuildertest.Options) {
			o.Version = agentbuildertest.V95
			o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "long", Name: "Long", RunTime: time.Hour, Reply: "Done."})
		})
		c := newEngine(b)
		c.Logf = nil
		var recs []*store.Record
		for i := range n {
			m := message(sim, "long", fmt.Sprintf("task %d", i))
			m.PollInterval, m.MaxWait = time.Minute, 2*time.Hour
			m.Target.KibanaVersion = "9.5.0"
			recs = append(recs, queued(b, c, m))
		}
		runtime.GC()
		var before, during runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() {
			defer close(served)
			c.Serve(ctx, recs[0].Identity, testKey, time.Minute, time.Minute)
		}()
		deadline := time.Now().Add(2 * time.Minute)
		for sim.ActiveRuns() < n && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := sim.ActiveRuns(); got != n {
			b.Fatalf("%d runs going on, want %d", got, n)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&during)
		g := runtime.NumGoroutine() - g0
		stop()
		<-served
		b.ReportMetric(float64(g)/n, "goroutines/task")
		b.ReportMetric(float64(int64(during.StackInuse)-int64(before.StackInuse))/n, "stack-B/task")
		b.ReportMetric(float64(int64(during.HeapInuse)-int64(before.HeapInuse))/n, "heap-B/task")
	}
}
