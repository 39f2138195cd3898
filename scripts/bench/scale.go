//go:build linux

package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// The scale section (tracker issue 24) runs its simulators in this
// process (client/agentbuildertest), not as dev-server processes: the
// request counts by kind, the open requests and connections and the runs'
// ends are then read directly (Sim.Counts, MaxOpenRequests,
// Server.Connections, EndedAt), with no admin route to add to dev-server
// for them. The tasks are still sent by the real binary (send-async) and
// followed by its real detached worker processes.
var (
	scaleFlag = flag.String("scale", "10,100,1000", "pending task counts for the scale section")
	scalePoll = flag.Duration("scale-poll", 5*time.Second, "the poll interval of the scale section's tasks (A2A_COURIER_POLL_INTERVAL); per-minute figures are also given normalised to the default 20 s")
	scaleRels = flag.String("scale-releases", "9.5,9.6,serverless", "simulated Kibana releases for the scale section")
	scaleSend = flag.Int("scale-senders", 4, "send-async processes started at once in the scale section")
)

// Targets of tracker issue 24, at 1,000 pending tasks.
const (
	targetScaleMemory    = 64 << 20
	targetScaleWaited    = 5 * time.Second
	defaultPoll          = 20 * time.Second
	scaleWaitedMax       = 5 // tasks a result --wait waits on, per row
	scaleKindOther       = "other"
	scaleSteadyMinWindow = 3 // poll intervals
	scaleRampSkip        = 8 * time.Second
)

var scaleKinds = []string{agentbuildertest.KindListConversations, agentbuildertest.KindGetConversation,
	agentbuildertest.KindTasksGet, agentbuildertest.KindSend, agentbuildertest.KindCard, scaleKindOther}

// scaleRow is what one row measured: n tasks on one release.
type scaleRow struct {
	release string
	n       int
	sendFor time.Duration // sending the n tasks (send-async, batches at once)
	window  time.Duration // the steady window: every task pending, no run ended
	steady  map[string]int
	total   map[string]int
	polls   int // poll intervals from the first send to the last reply
	maxConn int
	maxOpen int // open message/send requests at most
	workers int // most worker processes seen at once
	rss     int64
	pss     int64
	waited  []time.Duration
	rest    []time.Duration
	late    int // replies read after more than one list read past their run's end
	states  map[string]int
}

func benchScale(b *bench) {
	var ns []int
	for _, f := range strings.Split(*scaleFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		ns = append(ns, n)
	}
	poll := *scalePoll
	fmt.Printf("## 7. Scale: many pending tasks (issue 24)\n\n")
	fmt.Printf("N tasks sent with `send-async` (the real binary, %d at once) to one agent of an in-process simulator, followed "+
		"by the real detached worker of the credential; poll interval %s (`A2A_COURIER_POLL_INTERVAL`); run time 40 s + 80 ms "+
		"per task, so that every task is pending over several polls. After the steady window (6 s before the first run ends), one `result --wait` "+
		"waits on the first %d sent, which end first (its wait marker: looked at every 2 s); the rest nobody waits on. *Steady* rates are per minute over the window where every task is "+
		"sent (and 8 s, past the quick first looks) and no run has ended (counted by the simulator); *at 20 s* scales the poll-driven reads by %s/20 s (the default "+
		"poll interval, the ceiling for tasks nobody waits on). Memory: RSS and PSS summed over the worker processes "+
		"(/proc/<pid>/smaps_rollup), the most seen in one-second samples. *Reply*: from the simulator ending the run "+
		"(`EndedAt`) to the record's final write (`updated_at`). Binary: `%s`.\n\n",
		*scaleSend, poll, scaleWaitedMax, poll, filepath.Base(b.bin))
	fmt.Printf("| release | tasks | sent in | steady window | list /min | get conv. /min | tasks/get /min | list /min at 20 s | per-task reads /min at 20 s | " +
		"whole run: list reads / polls | whole run: per-task reads / task | max open conns | max open POSTs | workers | RSS | PSS | " +
		"reply, waited (median) | reply, rest (median) | rest p90 | rest max |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var rows []scaleRow
	for _, rel := range strings.Split(*scaleRels, ",") {
		for _, n := range ns {
			r := b.scaleRun(strings.TrimSpace(rel), n, poll)
			rows = append(rows, r)
			r.print(poll)
		}
	}
	fmt.Println()
	for _, r := range rows {
		if r.n == slices.Max(ns) {
			r.targets(b, poll)
		}
	}
	fmt.Printf("Request counts of each row by kind, whole run: ")
	for i, r := range rows {
		if i > 0 {
			fmt.Printf("; ")
		}
		fmt.Printf("%s × %d: %v (final states %v; replies read after more than one list read past their run's end: %d)", r.release, r.n, r.total, r.states, r.late)
	}
	fmt.Printf(".\n\n")
}

func (r scaleRow) rate(kind string, poll time.Duration, norm bool) float64 {
	if r.window <= 0 {
		return math.NaN()
	}
	v := float64(r.steady[kind]) * float64(time.Minute) / float64(r.window)
	if norm {
		v *= float64(poll) / float64(defaultPoll)
	}
	return v
}

func (r scaleRow) perTaskReads() int {
	return r.total[agentbuildertest.KindGetConversation] + r.total[agentbuildertest.KindTasksGet]
}

func (r scaleRow) print(poll time.Duration) {
	perTask := r.rate(agentbuildertest.KindGetConversation, poll, true) + r.rate(agentbuildertest.KindTasksGet, poll, true)
	fmt.Printf("| %s | %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %d / %d | %.2f | %d | %d | %d | %s | %s | %s | %s | %s | %s |\n",
		r.release, r.n, sec(r.sendFor), sec(r.window),
		r.rate(agentbuildertest.KindListConversations, poll, false), r.rate(agentbuildertest.KindGetConversation, poll, false),
		r.rate(agentbuildertest.KindTasksGet, poll, false), r.rate(agentbuildertest.KindListConversations, poll, true), perTask,
		r.total[agentbuildertest.KindListConversations], r.polls, float64(r.perTaskReads())/float64(r.n),
		r.maxConn, r.maxOpen, r.workers, mib(r.rss), mib(r.pss),
		secOr(r.waited, 50), secOr(r.rest, 50), secOr(r.rest, 90), secOr(r.rest, 100))
}

// secOr is the p-th percentile of d in seconds, "–" for no sample.
func secOr(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "–"
	}
	if p == 50 {
		return sec(median(d))
	}
	return sec(pct(d, p))
}

// targets gives the verdicts of issue 24 for one row. The list answers
// on 9.5 and Serverless; on 9.6.0 a failed run shows only in tasks/get,
// which is read per task by design (docs/design.md, "A thousand tasks").
func (r scaleRow) targets(b *bench, poll time.Duration) {
	name := fmt.Sprintf("%s, %d pending", r.release, r.n)
	b.target(name+": memory ≤ 64 MiB (RSS of the workers)", fmt.Sprintf("%s RSS, %s PSS, %d workers", mib(r.rss), mib(r.pss), r.workers),
		r.rss <= targetScaleMemory)
	if r.release != "9.6" {
		// The reads a task's changes cost: on 9.5 its round, one read of
		// the conversation (none when the open POST brought the reply);
		// on Serverless tasks/get when the conversation made at receipt
		// appears, then tasks/get and the conversation (the reply) when
		// the round lands. The list reads are judged in the steady
		// window (no waiter, no run ended): one per poll, +1 for the
		// grid's phase. Serverless's reads beyond these (a change read
		// as still running is read once more; a listed task is read
		// every quarter of its age, docs/design.md) count against the
		// target: it is the issue's, not the design's.
		reads := 1
		if r.release == "serverless" {
			reads = 3
		}
		lists := r.steady[agentbuildertest.KindListConversations]
		bound := int(r.window/poll) + 1
		ok := r.window > 0 && lists <= bound && r.perTaskReads() <= reads*r.n
		b.target(name+": ≤ 1 list read per poll + the reads of changed tasks",
			fmt.Sprintf("steady: %d list reads in %s (%d polls), %d per-task reads; whole run: %d per-task reads for %d tasks (bound %d)",
				lists, sec(r.window), bound, r.steady[agentbuildertest.KindGetConversation]+r.steady[agentbuildertest.KindTasksGet],
				r.perTaskReads(), r.n, reads*r.n), ok)
	}
	if len(r.waited) > 0 {
		m := median(r.waited)
		b.target(name+": waited reply ≤ 5 s after run end (median)", sec(m), m <= targetScaleWaited)
	}
	if len(r.rest) > 0 {
		m := median(r.rest)
		b.target(name+": other replies ≤ one poll after run end (median)", fmt.Sprintf("%s (poll %s; max %s)", sec(m), poll, sec(pct(r.rest, 100))), m <= poll)
	}
}

// scaleRun sends n tasks to a fresh simulator of one release and follows
// them to the end.
func (b *bench) scaleRun(release string, n int, poll time.Duration) scaleRow {
	runTime := 40*time.Second + time.Duration(n)*80*time.Millisecond
	srv := agentbuildertest.NewServer(agentbuildertest.Options{
		Version: agentbuildertest.Version(release),
		Keys:    []agentbuildertest.Key{{APIKey: apiKey, Username: "bench"}},
		Agents:  []agentbuildertest.Agent{{ID: "long", Name: "Long", RunTime: runTime, Reply: "Done: {{input}}."}},
	})
	defer srv.Close()
	progress("scale: %s, %d tasks (run time %s)", release, n, runTime)
	s := &sim{url: srv.URL}
	state := filepath.Join(b.dir, fmt.Sprintf("state-scale-%s-%d", release, n))
	env := append(b.env(s, state), "A2A_COURIER_POLL_INTERVAL="+poll.String())
	row := scaleRow{release: release, n: n}
	mem := newMemSampler(state)
	start := time.Now()
	ids := b.sendMany(env, n)
	row.sendFor = time.Since(start)
	// The steady window: from every task sent (and 8 s) to 6 s before the
	// first run can end (no run starts before the first send). The caller who waits
	// comes after it, on the first tasks sent, which end first: the window
	// is the pace of tasks nobody waits on.
	// Its start waits out the quick first looks of the last tasks sent
	// (1, 2 and 4 s after their send, each a list read of its own grid).
	time.Sleep(scaleRampSkip)
	t1, c1 := time.Now(), srv.Counts()
	windowEnd := start.Add(runTime - 6*time.Second)
	if w := windowEnd.Sub(t1); w >= scaleSteadyMinWindow*poll {
		time.Sleep(w)
		row.window, row.steady = time.Since(t1), diffCounts(srv.Counts(), c1)
	} else {
		progress("scale: %s × %d: sending took %s, leaving %s before the first run ends: no steady window", release, n, row.sendFor, w)
	}
	waited := ids[:min(scaleWaitedMax, max(1, n/10))]
	wait := exec.Command(b.bin, append([]string{"result", "--wait", "--timeout", "30m"}, waited...)...)
	wait.Env = env
	check(wait.Start())
	b.waitAllFinal(state, ids, runTime+5*time.Minute)
	check(wait.Wait())
	end := time.Now()
	mem.stop()
	stopWorkers(state)
	row.total = diffCounts(srv.Counts(), nil)
	row.polls = int(end.Sub(start)/poll) + 1
	_, row.maxConn, _ = srv.Connections()
	row.maxOpen = srv.MaxOpenRequests()[agentbuildertest.KindSend]
	row.workers, row.rss, row.pss = mem.max()
	row.states = map[string]int{}
	isWaited := map[string]bool{}
	for _, id := range waited {
		isWaited[id] = true
	}
	for _, id := range ids {
		rec := readRecord(state, id)
		row.states[rec.State]++
		ended, ok := srv.EndedAt(id)
		if !ok || rec.State != "completed" {
			continue
		}
		if isWaited[id] {
			row.waited = append(row.waited, rec.UpdatedAt.Sub(ended))
		} else {
			row.rest = append(row.rest, rec.UpdatedAt.Sub(ended))
		}
		if k, ok := srv.ListReadsBeforeLook(id); ok && k > 1 {
			row.late++
		}
	}
	os.RemoveAll(state)
	return row
}

// diffCounts is a-b by kind, the kinds outside scaleKinds summed as
// "other".
func diffCounts(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			if !slices.Contains(scaleKinds, k) {
				k = scaleKindOther
			}
			out[k] += d
		}
	}
	return out
}

// sendMany runs send-async n times, -scale-senders at once, and returns
// the contextIds in the order of the tasks.
func (b *bench) sendMany(env []string, n int) []string {
	ids := make([]string, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range *scaleSend {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := exec.Command(b.bin, "send-async", "long", fmt.Sprintf("scale task %d", i))
				c.Env = env
				out, err := c.Output()
				if err != nil {
					errs[i] = fmt.Errorf("send-async %d: %v", i, err)
				}
				ids[i] = strings.TrimSpace(string(out))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		check(err)
	}
	return ids
}

// waitAllFinal waits until every record is final, reading the tasks
// directory each second (a watch of 1,000 records would only add load).
func (b *bench) waitAllFinal(state string, ids []string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	left := slices.Clone(ids)
	for time.Now().Before(deadline) {
		left = slices.DeleteFunc(left, func(id string) bool {
			r, ok := tryReadRecord(filepath.Join(state, "tasks", id+".json"))
			return ok && isFinal(r.State)
		})
		if len(left) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	check(fmt.Errorf("%d tasks of %s not final after %s", len(left), state, limit))
}

// memSampler samples the worker processes of a state directory each
// second: their number and their summed RSS and PSS, keeping the most.
type memSampler struct {
	mu            sync.Mutex
	workers       int
	rss, pss      int64
	done, stopped chan struct{}
}

func newMemSampler(state string) *memSampler {
	m := &memSampler{done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(m.stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			pids := workerPIDs(state)
			var rss, pss int64
			for _, pid := range pids {
				r, p := memOf(pid)
				rss, pss = rss+r, pss+p
			}
			m.mu.Lock()
			m.workers, m.rss, m.pss = max(m.workers, len(pids)), max(m.rss, rss), max(m.pss, pss)
			m.mu.Unlock()
			select {
			case <-m.done:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memSampler) stop() { close(m.done); <-m.stopped }

func (m *memSampler) max() (int, int64, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.workers, m.rss, m.pss
}
