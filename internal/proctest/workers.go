package proctest

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/store"
)

// Workers returns the pids of the workers that serve a state directory:
// the owners the store records of its held worker locks, every identity
// and slot.
func Workers(stateDir string) []int {
	if _, err := os.Stat(filepath.Join(stateDir, "workers")); err != nil {
		return nil // looking makes no state directory
	}
	st, err := store.Open(stateDir)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir(filepath.Join(stateDir, "workers"))
	var pids []int
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || strings.Contains(id, ".") {
			continue // a slot past the first, or no lock
		}
		for _, w := range st.Workers(id) {
			if w.PID > 0 {
				pids = append(pids, w.PID)
			}
		}
	}
	return pids
}

// Spawned returns the pids of every worker started for a state directory,
// running or not, as the spawner logged them ("spawn[N] started worker M")
// in the worker log and its previous generation.
func Spawned(stateDir string) []int {
	var pids []int
	for _, name := range []string{"worker.log.1", "worker.log"} {
		f, err := os.Open(filepath.Join(stateDir, "logs", name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			_, rest, ok := strings.Cut(sc.Text(), "] started worker ")
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, " ")
			if pid, err := strconv.Atoi(n); err == nil {
				pids = append(pids, pid)
			}
		}
		f.Close()
	}
	return pids
}

// Running returns the pids of the workers started for a state directory
// that still run: those holding a worker lock, and those the spawner
// logged that have not ended (starting, or on their way out).
func Running(stateDir string) []int {
	seen := map[int]bool{}
	var pids []int
	for _, pid := range append(Workers(stateDir), Spawned(stateDir)...) {
		if !seen[pid] && Alive(pid) {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	return pids
}

// EndWorkers ends the workers of a state directory, for a test's cleanup:
// they run detached and would outlive the test binary (and, on Windows,
// keep the test's temporary directory from being removed). It kills the
// ones that hold a worker lock, the store's word that the pid is the
// worker's; one the spawner logged that holds none is starting (it takes
// its lock in a moment, and is killed then) or ending: it is waited for,
// never killed on the log's word, whose pid may be another's by now.
func EndWorkers(stateDir string, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		for _, pid := range Workers(stateDir) {
			Kill(pid)
		}
		if len(Running(stateDir)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
