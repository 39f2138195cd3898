//go:build linux

package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// targetSendFactor: one send within this many times a minimal Go client
// making the same requests (tracker issue 24).
const targetSendFactor = 1.5

// minimalClient is the minimal Go client a send is compared with: the
// same requests (the card when -card, then a blocking message/send), the
// reply's text printed, nothing written to disk.
const minimalClient = `package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

func id() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func do(method, url string, body []byte) []byte {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "ApiKey "+os.Getenv("KIBANA_API_KEY"))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		panic(fmt.Sprint(resp.Status, err))
	}
	return b
}

func main() {
	base, agent, text := os.Getenv("KIBANA_URL")+"/api/agent_builder/a2a/", os.Args[1], os.Args[2]
	if len(os.Args) > 3 && os.Args[3] == "-card" {
		do("GET", base+agent+".json", nil)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id(), "method": "message/send", "params": map[string]any{
		"message": map[string]any{"kind": "message", "role": "user", "messageId": id(), "contextId": id(),
			"parts": []any{map[string]any{"kind": "text", "text": text}}},
		"configuration": map[string]any{"blocking": true}}})
	var out struct {
		Result struct {
			Parts []struct {
				Text string ` + "`json:\"text\"`" + `
			} ` + "`json:\"parts\"`" + `
		} ` + "`json:\"result\"`" + `
	}
	if err := json.Unmarshal(do("POST", base+agent, body), &out); err != nil || len(out.Result.Parts) == 0 {
		panic(fmt.Sprint("no reply: ", err))
	}
	fmt.Println(out.Result.Parts[0].Text)
}
`

// buildMinimal writes a one-file Go program and builds it as the binary
// is built (CGO_ENABLED=0), outside the module.
func (b *bench) buildMinimal(name, src string) string {
	dir := filepath.Join(b.dir, name)
	check(os.MkdirAll(dir, 0o755))
	check(os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	check(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.26\n"), 0o644))
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	build.Stderr = os.Stderr
	check(build.Run())
	return bin
}

// benchSend compares one send with the minimal client making the same
// requests against the same in-process simulator (whose counts say which
// requests a send makes), started in turns.
func benchSend(b *bench) {
	srv := agentbuildertest.NewServer(agentbuildertest.Options{
		Keys:   []agentbuildertest.Key{{APIKey: apiKey, Username: "bench"}},
		Agents: []agentbuildertest.Agent{{ID: "fast", Name: "Fast", Description: "Answers at once", Reply: "ok"}},
	})
	defer srv.Close()
	minimal := b.buildMinimal("minimalclient", minimalClient)
	s := &sim{url: srv.URL}
	state := filepath.Join(b.dir, "state-send")
	env := b.env(s, state)
	runPrinting := func(want, bin string, args ...string) time.Duration {
		c := exec.Command(bin, args...)
		c.Env = env
		start := time.Now()
		out, err := c.Output()
		d := time.Since(start)
		if err != nil || (want != "" && strings.TrimSpace(string(out)) != want) {
			check(fmt.Errorf("%s %s: %v, printed %q", filepath.Base(bin), strings.Join(args, " "), err, out))
		}
		return d
	}
	run := func(bin string, args ...string) time.Duration { return runPrinting("ok", bin, args...) }
	// The first send reads the server's status and the card and keeps
	// them; the second shows what a send asks then.
	run(b.bin, "send", "fast", "warm-up")
	before := srv.Counts()
	run(b.bin, "send", "fast", "which requests")
	kinds := diffCounts(srv.Counts(), before)
	margs := []string{"fast", "minimal"}
	if kinds[agentbuildertest.KindCard] > 0 {
		margs = append(margs, "-card")
	}
	before = srv.Counts()
	run(minimal, margs...)
	if mk := diffCounts(srv.Counts(), before); !maps.Equal(mk, kinds) {
		check(fmt.Errorf("send asked %v, the minimal client %v", kinds, mk))
	}
	n := 5 * *runs
	// version, in the same turns, is the floor: the binary's start and
	// exit, which every command pays before its own work.
	var sends, mins, versions []time.Duration
	for i := -5; i < n; i++ {
		sd := run(b.bin, "send", "fast", fmt.Sprintf("send %d", i))
		md := run(minimal, margs...)
		vd := runPrinting("", b.bin, "version")
		if i >= 0 {
			sends, mins, versions = append(sends, sd), append(mins, md), append(versions, vd)
		}
	}
	ratio := float64(median(sends)) / float64(median(mins))
	fmt.Printf("## 8. One send beside a minimal Go client\n\n")
	fmt.Printf("`a2a-courier send fast <text>` (the card and the server's status kept from an earlier send, as after the first) "+
		"beside a minimal Go client built the same way (CGO_ENABLED=0) making the same requests (%v, by the simulator's "+
		"counts), the reply's text printed, nothing written; against the same in-process simulator (an agent that answers "+
		"at once), started in turns, %d runs each after 5 warm-ups.\n\n", kinds, n)
	fmt.Printf("| program | wall (median) | wall p90 |\n|---|---|---|\n")
	fmt.Printf("| a2a-courier send | %s | %s |\n", ms2(median(sends)), ms2(pct(sends, 90)))
	fmt.Printf("| minimal Go client | %s | %s |\n", ms2(median(mins)), ms2(pct(mins, 90)))
	fmt.Printf("| a2a-courier version (the floor: start and exit) | %s | %s |\n\n", ms2(median(versions)), ms2(pct(versions, 90)))
	fmt.Printf("Ratio of the medians: **%.2f×** (target ≤ %.1f×). `version` alone is %.2f× the minimal client; "+
		"the send's own work (send − version) is %s.\n\n", ratio, targetSendFactor,
		float64(median(versions))/float64(median(mins)), ms2(median(sends)-median(versions)))
	b.target("send / a minimal Go client (same requests)", fmt.Sprintf("%.2f× (%s vs %s)", ratio, ms2(median(sends)), ms2(median(mins))),
		ratio <= targetSendFactor)
}
