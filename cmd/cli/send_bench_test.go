package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// BenchmarkSend is the command's own work in one `send fast <text>`, in
// this process against the simulator (an agent that answers at once),
// without the process's start (package inits, the runtime): settings, the
// cached card and status, the record created, locked and written before
// and after the POST, the audit lines. Each run is a new task, as each
// send is; the first run reads and keeps the card and the status, as the
// first send of a process does, and is left out (b.Loop starts after it).
// The figure depends on the disk (three records' fsyncs and directory
// fsyncs, four new files) more than on the code: docs/performance.md.
func BenchmarkSend(b *testing.B) {
	srv := agentbuildertest.NewServer(agentbuildertest.Options{
		Keys:   []agentbuildertest.Key{{APIKey: testKey, Username: "bench"}},
		Agents: []agentbuildertest.Agent{{ID: "fast", Name: "Fast", Description: "Answers at once", Reply: "ok"}},
	})
	defer srv.Close()
	dir := b.TempDir()
	env := map[string]string{
		"KIBANA_URL": srv.URL, "KIBANA_API_KEY": testKey, "NO_COLOR": "1",
		"A2A_COURIER_STATE_DIR": filepath.Join(dir, "state"), "A2A_COURIER_CONFIG_DIR": filepath.Join(dir, "config"),
		"HOME": filepath.Join(dir, "home"),
	}
	i := 0
	send := func() {
		i++
		var out, errb bytes.Buffer
		p := &Process{
			Args: []string{"send", "fast", fmt.Sprintf("send %d", i)}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			TermWidth: func() int { return 0 },
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Environ:   func() []string { return nil },
			Executable: func() (string, error) {
				return os.Args[0], nil
			},
			Now: time.Now,
		}
		if code := Run(context.Background(), p); code != 0 || strings.TrimSpace(out.String()) != "ok" {
			b.Fatalf("send: exit %d, stdout %q, stderr %s", code, out.String(), errb.String())
		}
	}
	send()
	b.ReportAllocs()
	for b.Loop() {
		send()
	}
}
