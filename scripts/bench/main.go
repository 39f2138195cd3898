//go:build linux

// Command bench measures a2a-courier as a user runs it: the real binary as
// separate processes against the Agent Builder simulator running as another
// process (a2a-courier dev-server). It prints a Markdown table per section
// on stdout and its progress on stderr.
//
//	go run ./scripts/bench                     # every section, 20 runs each
//	go run ./scripts/bench -n 5                # quick: about a minute
//	go run ./scripts/bench -only show -sizes 100
//
// The sections (docs/performance.md has the targets):
//
//  0. start: a2a-courier version beside a minimal Go program (hello, world
//     with fmt.Println) the bench builds the same way, started in turns,
//     and the ratio of their medians;
//  1. commands: each command's wall time and peak RSS, beside the time the
//     same requests take from a minimal HTTP client in this process (the
//     server's time), and the difference (the command's own overhead);
//  2. async: how long send-async takes to return, with and without a
//     worker already running;
//  3. footprint: worker processes and their memory with 1, 10 and 100
//     tasks pending;
//  4. recovery: from the simulator storing the round to the task record
//     holding the reply, with the connection alive and with a proxy cutting
//     it, at the default poll interval and at 1 s;
//  5. show: show on large conversations beside curl downloading the same
//     document;
//  6. releases: per Kibana release (9.5, 9.6, serverless), with a proxy
//     cutting every long call, the time from a run's end to its reply in
//     the record, and from a run's failure to the record saying failed;
//  7. scale: 10, 100 and 1,000 tasks pending (-scale) on 9.5, 9.6 and
//     Serverless simulators run in this process (their request counts by
//     kind, open requests and connections read directly): Kibana requests
//     per minute, worker processes, RSS and PSS, and the time from a run's
//     end to its reply recorded, waited on or not (scale.go);
//  8. send: one send beside a minimal Go client the bench writes and
//     builds, making the same requests (by the simulator's counts) against
//     the same in-process simulator, in turns, and the ratio of their
//     medians (send.go).
//
// Figures are medians over -n runs on a shared machine: compare them with
// each other within one run, not across machines.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

const apiKey = "YmVuY2g6YmVuY2gtc2VjcmV0" // base64 of bench:bench-secret

var (
	runs      = flag.Int("n", 20, "runs per measurement (the medians are over these)")
	only      = flag.String("only", "", "comma-separated sections to run (default: all): "+strings.Join(sectionNames(), ","))
	pending   = flag.String("pending", "1,10,100", "pending task counts for the footprint section")
	sizes     = flag.String("sizes", "1,10,100", "conversation sizes in MiB for the show section")
	encodings = flag.String("encodings", "gzip,identity", "encodings for the show section: gzip (as Kibana sends) and/or identity")
	cutAfter  = flag.Duration("cut-after", time.Second, "when the simulated proxy cuts a running send, in the recovery section")
	binFlag   = flag.String("bin", "", "measure this a2a-courier binary instead of building ./cmd/a2a-courier with CGO_ENABLED=0 (to compare builds)")
	simFlag   = flag.String("sim", "", "run the simulator (dev-server) from this binary instead of a -tags simulator build of the checkout, so that two builds meet the same server")
)

// Targets of tracker issue 8, on this machine.
const (
	targetOverhead       = 10 * time.Millisecond
	targetAsync          = 20 * time.Millisecond
	targetFootprint      = 64 << 20
	targetRecoveryAlive  = 100 * time.Millisecond
	targetShowTimeFactor = 2.0
	// targetStartFactor: a2a-courier version within this many times the
	// start of a minimal Go program (tracker issue 14).
	targetStartFactor = 1.6
)

type section struct {
	name string
	run  func(b *bench)
}

var sections = []section{
	{"start", benchStart},
	{"commands", benchCommands},
	{"async", benchSendAsync},
	{"footprint", benchFootprint},
	{"recovery", benchRecovery},
	{"show", benchShow},
	{"releases", benchReleases},
	{"scale", benchScale},
	{"send", benchSend},
}

func sectionNames() []string {
	var n []string
	for _, s := range sections {
		n = append(n, s.name)
	}
	return n
}

type bench struct {
	dir     string
	bin     string
	simBin  string
	sims    []*sim
	summary []string // one Markdown table row per target
}

func main() {
	flag.Parse()
	os.Exit(run())
}

func run() (code int) {
	if *runs < 1 {
		progress("-n must be at least 1")
		return 2
	}
	dir, err := os.MkdirTemp("", "a2a-courier-bench-")
	if err != nil {
		progress("%v", err)
		return 1
	}
	b := &bench{dir: dir, bin: filepath.Join(dir, "a2a-courier")}
	defer b.cleanup()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitPanic); !ok {
				panic(r)
			}
			code = 1
		}
	}()
	if *binFlag != "" {
		abs, err := filepath.Abs(*binFlag)
		check(err)
		b.bin = abs
	} else {
		// As the README builds it: one static binary, which also starts
		// faster than one linked to libc (docs/performance.md).
		progress("building the binary (CGO_ENABLED=0)")
		build := exec.Command("go", "build", "-o", b.bin, "./cmd/a2a-courier")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		check(build.Run())
	}
	if *simFlag != "" {
		abs, err := filepath.Abs(*simFlag)
		check(err)
		b.simBin = abs
	} else {
		// The release binary carries no simulator: dev-server runs from a
		// build with it, the same code otherwise.
		progress("building the simulator (go build -tags simulator)")
		b.simBin = filepath.Join(dir, "a2a-courier-sim")
		build := exec.Command("go", "build", "-tags", "simulator", "-o", b.simBin, "./cmd/a2a-courier")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		check(build.Run())
	}

	fmt.Printf("# a2a-courier benchmark\n\n")
	fmt.Printf("%s\n\n", machine())
	fmt.Printf("Medians of %d runs unless said otherwise. Every command is the real binary started as a separate process, "+
		"against `a2a-courier dev-server` (Kibana 9.5 simulator) in another process, over loopback.\n\n", *runs)
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}
	for _, s := range sections {
		if len(want) == 0 || want[s.name] {
			progress("section %s", s.name)
			s.run(b)
		}
	}
	if len(b.summary) > 0 {
		fmt.Printf("## Targets\n\n| target | figure | |\n|---|---|---|\n")
		for _, row := range b.summary {
			fmt.Println(row)
		}
		fmt.Println()
	}
	fmt.Printf("Load average at the end: %s\n", loadAvg())
	return 0
}

func (b *bench) cleanup() {
	for _, pid := range workerPIDs(b.dir) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	for _, s := range b.sims {
		s.stop()
	}
	os.RemoveAll(b.dir)
}

func (b *bench) target(name, figure string, met bool) {
	verdict := "met"
	if !met {
		verdict = "**missed**"
	}
	b.summary = append(b.summary, fmt.Sprintf("| %s | %s | %s |", name, figure, verdict))
}

// --- the simulator as a separate process ---

type sim struct {
	url  string
	proc *exec.Cmd
}

// startSim runs a2a-courier dev-server with a YAML configuration and reads
// its address from the JSON document it prints.
func (b *bench) startSim(name, config string) *sim {
	cfg := filepath.Join(b.dir, name+".yaml")
	check(os.WriteFile(cfg, []byte(config), 0o600))
	s := &sim{proc: exec.Command(b.simBin, "dev-server", "--addr", "127.0.0.1:0", "--config", cfg, "--json")}
	out, err := s.proc.StdoutPipe()
	check(err)
	s.proc.Stderr = os.Stderr
	check(s.proc.Start())
	var doc struct {
		URL string `json:"url"`
	}
	line, err := bufio.NewReader(out).ReadBytes('}')
	check(err)
	check(json.Unmarshal(line, &doc))
	s.url = doc.URL
	b.sims = append(b.sims, s)
	return s
}

func (s *sim) stop() {
	if s.proc.Process != nil && s.proc.ProcessState == nil {
		s.proc.Process.Signal(syscall.SIGTERM)
		s.proc.Wait()
	}
}

// completedAt asks the simulator when the round of a contextId was stored.
func (s *sim) completedAt(ctxID string) (time.Time, bool) {
	resp, err := http.Get(s.url + "/__sim/runs?context_id=" + ctxID)
	if err != nil {
		return time.Time{}, false
	}
	defer resp.Body.Close()
	var doc struct {
		CompletedAt string `json:"completed_at"`
	}
	if json.NewDecoder(resp.Body).Decode(&doc) != nil || doc.CompletedAt == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, doc.CompletedAt)
	return t, err == nil
}

// endedAt asks the simulator when the last run of a contextId ended,
// completed, failed or aborted.
func (s *sim) endedAt(ctxID string) (time.Time, bool) {
	resp, err := http.Get(s.url + "/__sim/runs?context_id=" + ctxID)
	if err != nil {
		return time.Time{}, false
	}
	defer resp.Body.Close()
	var doc struct {
		EndedAt string `json:"ended_at"`
	}
	if json.NewDecoder(resp.Body).Decode(&doc) != nil || doc.EndedAt == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, doc.EndedAt)
	return t, err == nil
}

// --- running the binary ---

func (b *bench) env(s *sim, stateDir string) []string {
	env := []string{"KIBANA_URL=" + s.url, "KIBANA_API_KEY=" + apiKey, "A2A_COURIER_STATE_DIR=" + stateDir,
		"A2A_COURIER_CONFIG_DIR=" + filepath.Join(b.dir, "config"), "NO_COLOR=1"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KIBANA_") || strings.HasPrefix(name, "A2A_COURIER_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

type runResult struct {
	wall   time.Duration
	maxRSS int64 // bytes
	stdout string
}

// timed runs the binary once and returns its wall time, its peak RSS (the
// child's own rusage, from wait4) and its stdout.
func (b *bench) timed(s *sim, stateDir string, args ...string) runResult {
	c := exec.Command(b.bin, args...)
	c.Env = b.env(s, stateDir)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	if err := c.Run(); err != nil {
		check(fmt.Errorf("a2a-courier %s: %v: %s", strings.Join(args, " "), err, errb.String()))
	}
	d := time.Since(start)
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	return runResult{wall: d, maxRSS: ru.Maxrss * 1024, stdout: strings.TrimSpace(out.String())}
}

// --- 0. start ---

// minimalGo is the minimal Go program the start of the binary is compared
// with.
const minimalGo = `package main

import "fmt"

func main() { fmt.Println("hello, world") }
`

// benchStart compares the start of a2a-courier version with that of a
// minimal Go program, built the same way (CGO_ENABLED=0), the two started
// in turns so that both meet the same load.
func benchStart(b *bench) {
	dir := filepath.Join(b.dir, "minimal")
	check(os.MkdirAll(dir, 0o755))
	check(os.WriteFile(filepath.Join(dir, "main.go"), []byte(minimalGo), 0o644))
	check(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module minimal\n\ngo 1.26\n"), 0o644))
	minimal := filepath.Join(dir, "minimal")
	build := exec.Command("go", "build", "-o", minimal, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	build.Stderr = os.Stderr
	check(build.Run())
	start := func(bin string, args ...string) time.Duration {
		c := exec.Command(bin, args...)
		c.Env = []string{"HOME=" + b.dir, "PATH=" + os.Getenv("PATH")}
		t := time.Now()
		check(c.Run())
		return time.Since(t)
	}
	// Starts are short: ten times the runs, after ten warm-ups.
	n := 10 * *runs
	var courier, hello []time.Duration
	for i := -10; i < n; i++ {
		c, h := start(b.bin, "version"), start(minimal)
		if i >= 0 {
			courier, hello = append(courier, c), append(hello, h)
		}
	}
	ratio := float64(median(courier)) / float64(median(hello))
	fmt.Printf("## 0. Start\n\n")
	fmt.Printf("`a2a-courier version` beside a minimal Go program (hello, world with fmt.Println, built the same way), "+
		"each started %d times in turns after 10 warm-ups: wall time from exec to exit.\n\n", n)
	fmt.Printf("| binary | wall (median) | wall p90 |\n|---|---|---|\n")
	fmt.Printf("| a2a-courier version | %s | %s |\n", ms2(median(courier)), ms2(pct(courier, 90)))
	fmt.Printf("| minimal Go program | %s | %s |\n\n", ms2(median(hello)), ms2(pct(hello, 90)))
	fmt.Printf("Ratio of the medians: **%.2f×** (target ≤ %.1f×).\n\n", ratio, targetStartFactor)
	b.target("start of version / a minimal Go program", fmt.Sprintf("%.2f×", ratio), ratio <= targetStartFactor)
}

// --- 1. commands ---

// probe is a minimal HTTP client: one new connection per request, as a new
// process has, gzip asked for and the body read but not decoded. Its time
// is "the server's time" of a command.
type probe struct {
	s  *sim
	hc *http.Client
}

func newProbe(s *sim) *probe {
	return &probe{s: s, hc: &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}}
}

func (p *probe) do(method, path, body string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.s.url+path, rd)
	check(err)
	req.Header.Set("Authorization", "ApiKey "+apiKey)
	req.Header.Set("elastic-api-version", "2023-10-31")
	req.Header.Set("Accept-Encoding", "gzip")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.hc.Do(req)
	check(err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		check(fmt.Errorf("probe %s %s: HTTP %d", method, path, resp.StatusCode))
	}
}

func sendBody(text string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": newID(), "method": "message/send", "params": map[string]any{
		"message": map[string]any{"kind": "message", "role": "user", "messageId": newID(), "contextId": newID(),
			"parts": []any{map[string]any{"kind": "text", "text": text}}},
		"configuration": map[string]any{"blocking": true},
	}})
	return string(b)
}

type command struct {
	name   string
	args   func(i int) []string
	server func(p *probe, i int) // the same requests, from the probe
}

func benchCommands(b *bench) {
	s := b.startSim("sim-commands", `
keys:
  - {api_key: `+apiKey+`, username: bench}
agents:
  - {id: fast, name: Fast, description: Answers at once, reply: "ok"}
  - {id: other, name: Other, description: Another agent, reply: "ok"}
`)
	state := filepath.Join(b.dir, "state-commands")
	p := newProbe(s)
	// A conversation stored by a real run of the fast agent, for show.
	var sent struct {
		ContextID string `json:"context_id"`
	}
	check(json.Unmarshal([]byte(b.timed(s, state, "send", "fast", "a conversation to show", "--json").stdout), &sent))
	convID := "a2a-" + sent.ContextID
	cmds := []command{
		{"version (no request)", func(int) []string { return []string{"version"} }, func(*probe, int) {}},
		{"discover", func(int) []string { return []string{"discover"} },
			func(p *probe, _ int) { p.do("GET", "/api/agent_builder/agents", "") }},
		{"get-card fast", func(int) []string { return []string{"get-card", "fast"} },
			func(p *probe, _ int) { p.do("GET", "/api/agent_builder/a2a/fast.json", "") }},
		{"send fast (agent answers at once)", func(i int) []string { return []string{"send", "fast", fmt.Sprintf("bench send %d", i)} },
			func(p *probe, i int) {
				p.do("GET", "/api/agent_builder/a2a/fast.json", "")
				p.do("POST", "/api/agent_builder/a2a/fast", sendBody(fmt.Sprintf("bench probe %d", i)))
			}},
		{"history", func(int) []string { return []string{"history"} },
			func(p *probe, _ int) { p.do("GET", "/api/agent_builder/conversations", "") }},
		{"show (one round)", func(int) []string { return []string{"show", convID} },
			func(p *probe, _ int) { p.do("GET", "/api/agent_builder/conversations/"+convID, "") }},
	}
	walls := make([][]time.Duration, len(cmds))
	servers := make([][]time.Duration, len(cmds))
	rss := make([][]int64, len(cmds))
	// One warm-up round, then the runs, each command's probe and command
	// side by side so that both see the same load.
	for i := -1; i < *runs; i++ {
		for j, c := range cmds {
			start := time.Now()
			c.server(p, i)
			srv := time.Since(start)
			r := b.timed(s, state, c.args(i)...)
			if i >= 0 {
				walls[j] = append(walls[j], r.wall)
				servers[j] = append(servers[j], srv)
				rss[j] = append(rss[j], r.maxRSS)
			}
		}
	}
	fmt.Printf("## 1. Commands\n\n")
	fmt.Printf("Wall time of the whole process (start to exit, as a caller waits for it) and its peak RSS (rusage), "+
		"%d runs after one warm-up. *Server* is the same requests made by a minimal Go HTTP client in the bench process "+
		"(a new connection per request, gzip asked for, the body read but not decoded), run just before each command; "+
		"*overhead* is median wall minus median server: what the command itself costs, process start and exit included. "+
		"The fast agent answers at once (run time 0). `version` makes no request: it is the floor of starting the binary.\n\n", *runs)
	fmt.Printf("| command | wall (median) | wall p90 | server (median) | overhead (median) | peak RSS (median) | overhead ≤ %s |\n|---|---|---|---|---|---|---|\n", ms(targetOverhead))
	for j, c := range cmds {
		over := median(walls[j]) - median(servers[j])
		verdict := "met"
		if over > targetOverhead {
			verdict = "**missed**"
		}
		if strings.HasPrefix(c.name, "version") {
			verdict = "(reference)"
		} else {
			b.target("overhead of "+c.name, ms(over), over <= targetOverhead)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", c.name, ms(median(walls[j])), ms(pct(walls[j], 90)),
			ms(median(servers[j])), ms(over), mib(medianI(rss[j])), verdict)
	}
	fmt.Println()
	s.stop()
}

// --- 2. send-async ---

func benchSendAsync(b *bench) {
	s := b.startSim("sim-async", `
keys:
  - {api_key: `+apiKey+`, username: bench}
agents:
  - {id: slow, name: Slow, run_time: 1h, reply: "late"}
`)
	// With a worker running: every task after the first finds it.
	state := filepath.Join(b.dir, "state-async")
	b.timed(s, state, "send-async", "slow", "first task: starts the worker")
	var running, spawning []runResult
	for i := 0; i < *runs; i++ {
		running = append(running, b.timed(s, state, "send-async", "slow", fmt.Sprintf("pending task %d", i)))
	}
	stopWorkers(state)
	// Without: each in its own state directory, so each starts a worker.
	for i := 0; i < *runs; i++ {
		st := filepath.Join(b.dir, fmt.Sprintf("state-async-spawn-%d", i))
		spawning = append(spawning, b.timed(s, st, "send-async", "slow", fmt.Sprintf("lone task %d", i)))
		stopWorkers(st)
	}
	fmt.Printf("## 2. send-async return time\n\n")
	fmt.Printf("From starting `send-async` to its exit, stdout holding the contextId; the task stays pending on an agent "+
		"that runs for an hour. It reads the agent's card (one GET), writes the record, and either finds the worker "+
		"of its credential running or starts one. %d runs each.\n\n", *runs)
	fmt.Printf("| case | median | p90 | min | max | peak RSS (median) | median ≤ %s |\n|---|---|---|---|---|---|---|\n", ms(targetAsync))
	for _, c := range []struct {
		name string
		rs   []runResult
	}{{"worker already running", running}, {"no worker: starts one", spawning}} {
		var d []time.Duration
		var m []int64
		for _, r := range c.rs {
			d = append(d, r.wall)
			m = append(m, r.maxRSS)
		}
		med := median(d)
		b.target("send-async returns ("+c.name+")", ms(med), med <= targetAsync)
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", c.name, ms(med), ms(pct(d, 90)), ms(pct(d, 0)), ms(pct(d, 100)),
			mib(medianI(m)), verdict(med <= targetAsync))
	}
	fmt.Println()
	s.stop()
}

// --- 3. footprint ---

func benchFootprint(b *bench) {
	s := b.startSim("sim-footprint", `
keys:
  - {api_key: `+apiKey+`, username: bench}
agents:
  - {id: slow, name: Slow, run_time: 1h, reply: "late"}
`)
	fmt.Printf("## 3. Background footprint with tasks pending\n\n")
	fmt.Printf("N tasks started with `send-async` on an agent that answers after an hour (each holds its POST open and polls " +
		"every 20 s), measured once every task is `working` and a second has passed. Memory from `/proc/<pid>/smaps_rollup` of " +
		"every worker process: RSS counts shared pages (the binary) in full, PSS shares them out. One worker serves every task " +
		"of one credential (docs/design.md, \"The worker\").\n\n")
	fmt.Printf("| tasks pending | worker processes | threads | total RSS | total PSS | RSS per added task | RSS ≤ %s |\n|---|---|---|---|---|---|---|\n", mib(targetFootprint))
	var firstN int
	var firstRSS int64
	for _, f := range strings.Split(*pending, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		state := filepath.Join(b.dir, fmt.Sprintf("state-footprint-%d", n))
		for i := 0; i < n; i++ {
			b.timed(s, state, "send-async", "slow", fmt.Sprintf("footprint task %d", i))
		}
		waitStates(state, n, "working")
		time.Sleep(time.Second)
		pids := workerPIDs(state)
		var rssTotal, pssTotal int64
		threads := 0
		for _, pid := range pids {
			r, p := memOf(pid)
			rssTotal += r
			pssTotal += p
			threads += threadsOf(pid)
		}
		b.target(fmt.Sprintf("background memory, %d tasks pending", n), mib(rssTotal)+" RSS", rssTotal <= targetFootprint)
		perTask := "–"
		if firstN == 0 {
			firstN, firstRSS = n, rssTotal
		} else if n > firstN {
			perTask = kib((rssTotal - firstRSS) / int64(n-firstN))
		}
		fmt.Printf("| %d | %d | %d | %s | %s | %s | %s |\n", n, len(pids), threads, mib(rssTotal), mib(pssTotal),
			perTask, verdict(rssTotal <= targetFootprint))
		stopWorkers(state)
	}
	fmt.Println()
	s.stop()
}

// --- 4. recovery ---

// recoveryCase is one row: tasks whose run times are spread over one poll
// interval after the cut, so that the samples cover every phase between a
// poll and the round completing.
type recoveryCase struct {
	name  string
	sim   *sim
	poll  time.Duration
	agent func(i int) string
	// concurrent tasks are started together; otherwise one after another.
	concurrent bool
	bound      string
}

func benchRecovery(b *bench) {
	n := *runs
	const aliveRun = 300 * time.Millisecond
	alive := b.startSim("sim-recovery-alive", `
keys:
  - {api_key: `+apiKey+`, username: bench}
agents:
  - {id: alive, name: Alive, run_time: `+aliveRun.String()+`, reply: "alive reply"}
`)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "keys:\n  - {api_key: %s, username: bench}\nfaults:\n  proxy_cut_after: %s\nagents:\n", apiKey, *cutAfter)
	polls := []time.Duration{20 * time.Second, time.Second}
	for _, poll := range polls {
		for i := 0; i < n; i++ {
			run := *cutAfter + time.Duration(float64(poll)*(float64(i)+0.5)/float64(n))
			fmt.Fprintf(&cfg, "  - {id: cut-%s-%02d, name: Cut, run_time: %s, reply: \"reply after the cut\"}\n", poll, i, run)
		}
	}
	cut := b.startSim("sim-recovery-cut", cfg.String())
	cases := []recoveryCase{
		{name: "connection alive (poll 20s)", sim: alive, poll: 20 * time.Second, agent: func(int) string { return "alive" },
			bound: "target ≤ " + ms(targetRecoveryAlive)},
	}
	for _, poll := range polls {
		cases = append(cases, recoveryCase{
			name: fmt.Sprintf("cut by a proxy's 502 after %s, poll %s", *cutAfter, poll), sim: cut, poll: poll, concurrent: true,
			agent: func(i int) string { return fmt.Sprintf("cut-%s-%02d", poll, i) },
			bound: "≤ " + poll.String() + " by design",
		})
	}
	fmt.Printf("## 4. Recovery delay\n\n")
	fmt.Printf("From the simulator storing the round (`completed_at` of `GET /__sim/runs?context_id=`) to the task record "+
		"holding the reply: *recorded* is the record's `updated_at` (taken just before its final write), *visible* is when "+
		"this process saw the completed record appear (an inotify event on the tasks directory, then a read): "+
		"from then on `result` prints the reply. Tasks are started with `send-async` (the first starts the worker, before its POST). "+
		"With the connection alive the agent runs %s and the reply comes on the open POST. With the connection cut, the "+
		"simulator answers the POST with a proxy's 502 after %s while the run goes on; the worker reads the conversation at "+
		"once, then after 1, 2, 4, 8 and 16 s, then every poll interval. The %d runs of a cut row have run times spread evenly over one poll interval after "+
		"the cut (so the samples cover every phase between a read and the round completing), and run together.\n\n",
		aliveRun, *cutAfter, n)
	fmt.Printf("| case | recorded (median) | visible (median) | visible p90 | visible max | bound |\n|---|---|---|---|---|---|\n")
	for _, c := range cases {
		state := filepath.Join(b.dir, "state-recovery-"+strings.NewReplacer(" ", "-", "'", "", ",", "").Replace(c.name))
		w := newRecordWatcher(state)
		var ids []string
		// The first task starts the worker; that happens before its POST,
		// long before any round completes, so no figure includes it.
		start := func(i int) string {
			return b.timed(c.sim, state, "send-async", c.agent(i), fmt.Sprintf("recovery %d", i), "--poll-interval", c.poll.String()).stdout
		}
		if c.concurrent {
			for i := 0; i < n; i++ {
				ids = append(ids, start(i))
			}
			for _, id := range ids {
				w.wait(id, 2*c.poll+time.Minute)
			}
		} else {
			for i := 0; i < n; i++ {
				id := start(i)
				w.wait(id, 2*c.poll+time.Minute)
				ids = append(ids, id)
			}
		}
		w.close()
		var recorded, visible []time.Duration
		for _, id := range ids {
			done, ok := c.sim.completedAt(id)
			if !ok {
				check(fmt.Errorf("the simulator has no completed round for %s", id))
			}
			rec := readRecord(state, id)
			if rec.State != "completed" {
				check(fmt.Errorf("task %s ended %s", id, rec.State))
			}
			recorded = append(recorded, rec.UpdatedAt.Sub(done))
			visible = append(visible, w.seen[id].Sub(done))
		}
		med := median(visible)
		if !c.concurrent {
			b.target("reply recorded after the round completes, connection alive", ms(med), med <= targetRecoveryAlive)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", c.name, ms(median(recorded)), ms(med), ms(pct(visible, 90)),
			ms(pct(visible, 100)), c.bound)
		stopWorkers(state)
	}
	fmt.Println()
	alive.stop()
	cut.stop()
}

// recordWatcher notes when each task record is first seen in a final state.
type recordWatcher struct {
	dir   string
	w     *fsnotify.Watcher
	mu    sync.Mutex
	seen  map[string]time.Time
	wake  chan struct{}
	done  chan struct{}
	extra sync.WaitGroup
}

func newRecordWatcher(state string) *recordWatcher {
	dir := filepath.Join(state, "tasks")
	check(os.MkdirAll(dir, 0o700))
	fw, err := fsnotify.NewWatcher()
	check(err)
	check(fw.Add(dir))
	rw := &recordWatcher{dir: dir, w: fw, seen: map[string]time.Time{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	rw.extra.Add(1)
	go func() {
		defer rw.extra.Done()
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				now := time.Now()
				name := filepath.Base(ev.Name)
				id, isRecord := strings.CutSuffix(name, ".json")
				if !isRecord || strings.HasPrefix(name, ".") || ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename) == 0 {
					continue
				}
				rw.mu.Lock()
				_, known := rw.seen[id]
				rw.mu.Unlock()
				if known {
					continue
				}
				if r, ok := tryReadRecord(filepath.Join(dir, name)); ok && isFinal(r.State) {
					rw.mu.Lock()
					rw.seen[id] = now
					rw.mu.Unlock()
					select {
					case rw.wake <- struct{}{}:
					default:
					}
				}
			case <-fw.Errors:
			case <-rw.done:
				return
			}
		}
	}()
	return rw
}

func (rw *recordWatcher) wait(id string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		rw.mu.Lock()
		_, ok := rw.seen[id]
		rw.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-rw.wake:
		case <-time.After(100 * time.Millisecond):
		}
	}
	check(fmt.Errorf("task %s not final after %s", id, limit))
}

func (rw *recordWatcher) close() {
	close(rw.done)
	rw.w.Close()
	rw.extra.Wait()
}

type record struct {
	State     string    `json:"state"`
	UpdatedAt time.Time `json:"updated_at"`
	Path      string    `json:"path"`
}

func tryReadRecord(path string) (record, bool) {
	var r record
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &r) != nil {
		return r, false
	}
	return r, true
}

func readRecord(state, id string) record {
	r, ok := tryReadRecord(filepath.Join(state, "tasks", id+".json"))
	if !ok {
		check(fmt.Errorf("cannot read the record of %s", id))
	}
	return r
}

func isFinal(state string) bool {
	switch state {
	case "completed", "failed", "rejected", "canceled", "input_required", "expired":
		return true
	}
	return false
}

// --- 6. releases ---

// benchReleases runs tasks through a proxy that cuts every call after
// -cut-after, at the default poll interval, against the simulator as each
// Kibana release behaves: 9.5 keeps running a cut blocking send (read back
// from the conversation), 9.6 and Serverless abort it, so a2a-courier sends
// blocking:false there and follows the task. Run times are spread over one
// poll interval after the cut, so the samples cover the reads' every phase.
func benchReleases(b *bench) {
	n := *runs
	const poll = 20 * time.Second
	fmt.Printf("## 6. Kibana releases: a proxy cuts every call after %s\n\n", *cutAfter)
	fmt.Printf("`send-async` of %d tasks at once per row, default poll interval (%s); run times spread evenly over one "+
		"poll interval after the cut. *Reply* is from the simulator storing the round to the task record's final write; "+
		"*failure* is from the simulator ending a failing run to the record saying `failed` (what `result` then exits 6 "+
		"with). 9.5 stores no failed run and has no task to ask: a failure after a cut is not visible there, and the "+
		"task expires after `--max-wait` (the record's reason says the run may have failed).\n\n", n, poll)
	fmt.Printf("| release | path | reply (median) | reply p90 | reply max | failure (median) | failure p90 | failure max |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range []string{"9.5", "9.6", "serverless"} {
		var cfg strings.Builder
		fmt.Fprintf(&cfg, "version: %q\nkeys:\n  - {api_key: %s, username: bench}\nfaults:\n  proxy_cut_after: %s\nagents:\n", v, apiKey, *cutAfter)
		for i := 0; i < n; i++ {
			run := *cutAfter + time.Duration(float64(poll)*(float64(i)+0.5)/float64(n))
			fmt.Fprintf(&cfg, "  - {id: ok-%02d, name: OK, run_time: %s, reply: \"reply after the cut\"}\n", i, run)
			fmt.Fprintf(&cfg, "  - {id: bad-%02d, name: Bad, run_time: %s, fail: \"model provider timed out\"}\n", i, run)
		}
		s := b.startSim("sim-release-"+v, cfg.String())
		measure := func(prefix string, final string) ([]time.Duration, string) {
			state := filepath.Join(b.dir, "state-release-"+v+"-"+prefix)
			w := newRecordWatcher(state)
			var ids []string
			for i := 0; i < n; i++ {
				ids = append(ids, b.timed(s, state, "send-async", fmt.Sprintf("%s-%02d", prefix, i), fmt.Sprintf("release %d", i),
					"--poll-interval", poll.String(), "--max-wait", (2*poll).String()).stdout)
			}
			for _, id := range ids {
				w.wait(id, 3*poll+time.Minute)
			}
			w.close()
			stopWorkers(state)
			var d []time.Duration
			path := ""
			for _, id := range ids {
				rec := readRecord(state, id)
				if rec.State != final {
					return nil, rec.Path // 9.5: the failure is not visible
				}
				end, ok := s.endedAt(id)
				if !ok {
					check(fmt.Errorf("the simulator has no end for %s", id))
				}
				d = append(d, rec.UpdatedAt.Sub(end))
				path = rec.Path
			}
			return d, path
		}
		reply, path := measure("ok", "completed")
		failure, _ := measure("bad", "failed")
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", v, path, ms(median(reply)), ms(pct(reply, 90)), ms(pct(reply, 100)))
		if failure == nil {
			row += " not visible: expired after --max-wait | | |"
		} else {
			row += fmt.Sprintf(" %s | %s | %s |", ms(median(failure)), ms(pct(failure, 90)), ms(pct(failure, 100)))
		}
		fmt.Println(row)
		s.stop()
	}
	fmt.Println()
}

// --- 5. show ---

func benchShow(b *bench) {
	_, err := exec.LookPath("curl")
	if err != nil {
		fmt.Printf("## 5. show on large conversations\n\nSkipped: curl is needed for the download times.\n\n")
		return
	}
	var mbs []int
	for _, f := range strings.Split(*sizes, ",") {
		mb, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		mbs = append(mbs, mb)
	}
	const rounds = 50
	fmt.Printf("## 5. show on large conversations\n\n")
	fmt.Printf("Conversations of %d rounds, two tool calls a round whose results (log lines with escaped quotes, compressing "+
		"about 7:1 like real ones) make up the size, seeded into a dev-server (config key `seed`). Each of the %d runs times "+
		"`curl` downloading the document to /dev/null (with `--compressed` for gzip) and then `a2a-courier show <id>`, "+
		"both as whole processes; peak RSS is show's rusage maximum. The first download and show of each document are a "+
		"warm-up (the simulator renders and compresses a document once). Kibana sends gzip; identity is loopback "+
		"without compression, where a download costs no more than a memory copy.\n\n", rounds, *runs)
	fmt.Printf("| encoding | document | on the wire | download (curl, median) | show (median) | show / download | show peak RSS (median) | RSS bound 1.5×doc+20 MiB | targets |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, enc := range strings.Split(*encodings, ",") {
		enc = strings.TrimSpace(enc)
		gz := enc == "gzip"
		if !gz && enc != "identity" {
			check(fmt.Errorf("unknown encoding %q", enc))
		}
		var cfg strings.Builder
		fmt.Fprintf(&cfg, "keys:\n  - {api_key: %s, username: bench}\nagents:\n  - {id: elastic-ai-agent, name: Elastic AI Agent}\ndisable_gzip: %v\nseed:\n", apiKey, !gz)
		for _, mb := range mbs {
			fmt.Fprintf(&cfg, "  - {id: a2a-bench-%dmb, rounds: %d, bytes: %d, title: Bench %d MiB}\n", mb, rounds, mb<<20, mb)
		}
		progress("show: seeding %s conversations of %s MiB", enc, *sizes)
		s := b.startSim("sim-show-"+enc, cfg.String())
		state := filepath.Join(b.dir, "state-show")
		for _, mb := range mbs {
			id := fmt.Sprintf("a2a-bench-%dmb", mb)
			docURL := s.url + "/api/agent_builder/conversations/" + id
			curlArgs := []string{"-sf", "-H", "Authorization: ApiKey " + apiKey, "-o", "/dev/null"}
			if gz {
				curlArgs = append(curlArgs, "--compressed")
			}
			curlArgs = append(curlArgs, docURL)
			plain, wire := docSizes(docURL, gz)
			runCurl(curlArgs)
			if r := b.timed(s, state, "show", id); r.stdout != fmt.Sprintf("Answer to question %d.", rounds) {
				check(fmt.Errorf("show %s printed %q", id, r.stdout))
			}
			var downloads, shows []time.Duration
			var peaks []int64
			for i := 0; i < *runs; i++ {
				downloads = append(downloads, runCurl(curlArgs))
				r := b.timed(s, state, "show", id)
				shows = append(shows, r.wall)
				peaks = append(peaks, r.maxRSS)
			}
			dl, sh, peak := median(downloads), median(shows), medianI(peaks)
			bound := int64(1.5*float64(plain)) + 20<<20
			ratio := float64(sh) / float64(dl)
			memOK, timeOK := peak <= bound, ratio <= targetShowTimeFactor
			var notes []string
			if memOK {
				notes = append(notes, "memory met")
			} else {
				notes = append(notes, "memory **missed**")
			}
			if timeOK {
				notes = append(notes, "time met")
			} else {
				notes = append(notes, "time **missed**")
			}
			if gz && mb == slices.Max(mbs) {
				b.target(fmt.Sprintf("show %d MiB (gzip): peak ≤ 1.5×doc+20 MiB", mb), fmt.Sprintf("%s of %s", mib(peak), mib(bound)), memOK)
				b.target(fmt.Sprintf("show %d MiB (gzip): time ≤ 2× download", mb), fmt.Sprintf("%.2f× (%s vs %s)", ratio, sec(sh), sec(dl)), timeOK)
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %.2f× | %s | %s | %s |\n", enc, mib(plain), mib(wire), sec(dl), sec(sh), ratio,
				mib(peak), mib(bound), strings.Join(notes, ", "))
			progress("show %s %d MiB: download %v, show %v, peak %s", enc, mb, dl, sh, mib(peak))
		}
		s.stop()
	}
	fmt.Println()
}

// docSizes returns a document's decoded size and its size on the wire.
func docSizes(url string, gz bool) (plain, wire int64) {
	get := func(acceptGzip bool) int64 {
		req, err := http.NewRequest("GET", url, nil)
		check(err)
		req.Header.Set("Authorization", "ApiKey "+apiKey)
		if acceptGzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		check(err)
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		check(err)
		return n
	}
	plain = get(false)
	wire = plain
	if gz {
		wire = get(true)
	}
	return plain, wire
}

func runCurl(args []string) time.Duration {
	c := exec.Command("curl", args...)
	c.Stderr = os.Stderr
	start := time.Now()
	check(c.Run())
	return time.Since(start)
}

// --- workers and processes ---

// waitStates waits until n records of a state directory are in state.
func waitStates(state string, n int, want string) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(filepath.Join(state, "tasks"))
		count := 0
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if r, ok := tryReadRecord(filepath.Join(state, "tasks", e.Name())); ok && r.State == want {
				count++
			}
		}
		if count >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	check(fmt.Errorf("not all %d tasks of %s reached %s", n, state, want))
}

// workerPIDs finds the worker processes whose --state-dir is under prefix:
// the ones this benchmark started.
func workerPIDs(prefix string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) < 2 || args[1] != "worker" {
			continue
		}
		for i, a := range args {
			if a == "--state-dir" && i+1 < len(args) && strings.HasPrefix(args[i+1], prefix) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// stopWorkers ends the workers of a state directory and waits for them
// to go, so that the next measurement does not share the CPUs with them.
func stopWorkers(state string) {
	pids := workerPIDs(state)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
			if s, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(s), ") Z ") {
				break // exited, waiting for its reaper
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// memOf returns the resident and proportional set sizes of a process.
func memOf(pid int) (rss, pss int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			rss = v * 1024
		case "Pss:":
			pss = v * 1024
		}
	}
	return rss, pss
}

func threadsOf(pid int) int {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return len(entries)
}

// --- the machine ---

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				_, v, _ := strings.Cut(line, ":")
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("Machine: %s/%s, %d CPUs (%s), %s, Linux %s, %s; load average at the start %s; %s.",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpu, memTotal(), strings.TrimSpace(string(kernel)),
		runtime.Version(), loadAvg(), time.Now().UTC().Format(time.RFC3339))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return fmt.Sprintf("%.1f GiB RAM", float64(v)/1024/1024)
		}
	}
	return "unknown RAM"
}

// --- figures ---

// median is the middle value, the mean of the two middle ones for an even
// count.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pct is the p-th percentile by the nearest rank below.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func medianI(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func ms(d time.Duration) string  { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func ms2(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
func sec(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
func mib(n int64) string         { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int64) string         { return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10)) }

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		panic(exitPanic{})
	}
}

// exitPanic unwinds to main, so that the cleanup (workers, simulators, the
// temporary directory) runs before the exit.
type exitPanic struct{}
