// Command bench measures a2a-courier as a user runs it: the real binary as
// separate processes against the Agent Builder simulator running as another
// process (a2a-courier dev-server). It prints a Markdown table per section.
//
//	go run ./scripts/bench                    # every section
//	go run ./scripts/bench -only async,footprint -n 20
//
// Figures are wall-clock medians over -n runs on a shared machine: compare
// them with each other within one run, not across machines.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const apiKey = "YmVuY2g6YmVuY2gtc2VjcmV0"

var (
	runs    = flag.Int("n", 20, "runs per measurement")
	only    = flag.String("only", "", "comma-separated sections to run (default: all): "+strings.Join(sectionNames(), ","))
	pending = flag.String("pending", "1,10,50,100", "pending task counts for the footprint section")
)

type section struct {
	name string
	run  func(b *bench)
}

var sections = []section{
	{"async", benchSendAsync},
	{"footprint", benchFootprint},
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
	simURL  string
	simProc *exec.Cmd
}

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "a2a-courier-bench-")
	check(err)
	defer os.RemoveAll(dir)
	b := &bench{dir: dir, bin: filepath.Join(dir, "a2a-courier")}
	build := exec.Command("go", "build", "-o", b.bin, "./cmd/a2a-courier")
	build.Stderr = os.Stderr
	check(build.Run())
	b.startSim()
	defer b.simProc.Process.Kill()

	fmt.Printf("# a2a-courier benchmark\n\n")
	fmt.Printf("machine: %s/%s, %d CPUs, %s; %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), memTotal(), time.Now().UTC().Format(time.RFC3339))
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s != "" {
			want[s] = true
		}
	}
	for _, s := range sections {
		if len(want) == 0 || want[s.name] {
			s.run(b)
		}
	}
}

func (b *bench) startSim() {
	cfg := filepath.Join(b.dir, "sim.yaml")
	check(os.WriteFile(cfg, []byte(`
keys:
  - {api_key: `+apiKey+`, username: bench}
agents:
  - {id: fast, name: Fast, reply: "ok"}
  - {id: slow, name: Slow, run_time: 1h, reply: "late"}
`), 0o600))
	b.simProc = exec.Command(b.bin, "dev-server", "--addr", "127.0.0.1:0", "--config", cfg, "--json")
	out, err := b.simProc.StdoutPipe()
	check(err)
	check(b.simProc.Start())
	var doc struct {
		URL string `json:"url"`
	}
	line, err := bufio.NewReader(out).ReadBytes('}')
	check(err)
	check(json.Unmarshal(line, &doc))
	b.simURL = doc.URL
}

func (b *bench) env(stateDir string) []string {
	return append(os.Environ(), "KIBANA_URL="+b.simURL, "KIBANA_API_KEY="+apiKey, "A2A_COURIER_STATE_DIR="+stateDir)
}

// timed runs the binary once and returns its wall time and peak RSS.
func (b *bench) timed(stateDir string, args ...string) (time.Duration, int64, string) {
	c := exec.Command(b.bin, args...)
	c.Env = b.env(stateDir)
	var out bytes.Buffer
	var errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	if err := c.Run(); err != nil {
		check(fmt.Errorf("%s %s: %v: %s", b.bin, strings.Join(args, " "), err, errb.String()))
	}
	d := time.Since(start)
	ru := c.ProcessState.SysUsage().(*syscall.Rusage)
	return d, ru.Maxrss * 1024, strings.TrimSpace(out.String())
}

func benchSendAsync(b *bench) {
	state := filepath.Join(b.dir, "state-async")
	var times []time.Duration
	var rss []int64
	for i := 0; i < *runs; i++ {
		d, m, _ := b.timed(state, "send-async", "slow", fmt.Sprintf("pending task %d", i))
		times = append(times, d)
		rss = append(rss, m)
	}
	fmt.Printf("## send-async return time\n\n")
	fmt.Printf("%d runs, each leaving a task pending on a slow agent (a detached worker carries them).\n\n", *runs)
	fmt.Printf("| median | p90 | min | max | peak RSS (median) |\n|---|---|---|---|---|\n")
	fmt.Printf("| %s | %s | %s | %s | %s |\n\n", ms(median(times)), ms(pct(times, 90)), ms(minD(times)), ms(maxD(times)), mib(medianI(rss)))
	stopWorkers(state)
}

func benchFootprint(b *bench) {
	fmt.Printf("## Background footprint with tasks pending\n\n")
	fmt.Printf("N tasks started with send-async on an agent that answers after an hour; measured once every task is `working`.\n\n")
	fmt.Printf("| tasks pending | worker processes | total RSS | total PSS | per task (PSS) |\n|---|---|---|---|---|\n")
	for _, f := range strings.Split(*pending, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		state := filepath.Join(b.dir, fmt.Sprintf("state-footprint-%d", n))
		for i := 0; i < n; i++ {
			b.timed(state, "send-async", "slow", fmt.Sprintf("footprint task %d", i), "--poll-interval", "20s")
		}
		waitWorking(state, n)
		time.Sleep(500 * time.Millisecond)
		pids := workerPIDs(state)
		var rssTotal, pssTotal int64
		for _, pid := range pids {
			r, p := memOf(pid)
			rssTotal += r
			pssTotal += p
		}
		fmt.Printf("| %d | %d | %s | %s | %s |\n", n, len(pids), mib(rssTotal), mib(pssTotal), kib(pssTotal/int64(n)))
		stopWorkers(state)
	}
	fmt.Println()
}

func waitWorking(state string, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(filepath.Join(state, "tasks"))
		working := 0
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(state, "tasks", e.Name()))
			if err == nil && bytes.Contains(b, []byte(`"state": "working"`)) {
				working++
			}
		}
		if working == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "not all %d tasks reached working\n", n)
}

func workerPIDs(state string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("worker\x00")) && bytes.Contains(b, []byte(state+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func stopWorkers(state string) {
	for _, pid := range workerPIDs(state) {
		syscall.Kill(pid, syscall.SIGTERM)
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

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return fmt.Sprintf("%.0f GiB RAM", float64(v)/1024/1024)
		}
	}
	return "unknown RAM"
}

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s) - 1) * p / 100
	return s[i]
}

func minD(d []time.Duration) time.Duration { return pct(d, 0) }
func maxD(d []time.Duration) time.Duration { return pct(d, 100) }

func medianI(v []int64) int64 {
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func mib(n int64) string        { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int64) string        { return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10)) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
