package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// Files and data sent with a message, and files and data in replies,
// through the command line, against a2a-js's parts and files agents (the
// real @a2a-js/sdk 1.3.0 server), over JSON-RPC (1.0 and 0.3) and
// HTTP+JSON.

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// partsMounts are the a2a-js mounts the parts tests run against.
var partsMounts = []struct{ name, mount string }{
	{"v1.0 JSON-RPC", interoptest.MountV1},
	{"v0.3 JSON-RPC", interoptest.MountV03},
	{"v1.0 HTTP+JSON", interoptest.MountREST},
}

// TestFilesAndDataReachTheAgent: send --file and --data, in the
// foreground and through a detached worker (send-async), reach the agent
// with their names, media types, sizes and hashes; the record keeps those,
// never the content, and the spool the worker read them from is gone once
// the task is final. The files are removed as soon as send-async returns:
// the worker does not need them.
func TestFilesAndDataReachTheAgent(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	pngBytes, _ := base64.StdEncoding.DecodeString(interoptest.FilesPNG)
	csvBytes := []byte("name,n\nada,1\n")
	for _, m := range partsMounts {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s async=%v", m.name, async), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, nil)
				dir := t.TempDir()
				csv, png := filepath.Join(dir, "table.csv"), filepath.Join(dir, "dot.png")
				writePrivate(csv, csvBytes)
				writePrivate(png, pngBytes)
				dataType := "application/json" // A2A 0.3 data parts carry no media type
				if m.mount == interoptest.MountV03 {
					dataType = ""
				}
				want := strings.Join([]string{
					interoptest.PartLine(1, "text", "", "", `size=4 text="look"`),
					interoptest.PartLine(2, "raw", "table.csv", "text/csv", fmt.Sprintf("size=%d sha256=%s", len(csvBytes), hexSHA(csvBytes))),
					interoptest.PartLine(3, "raw", "dot.png", "image/png", fmt.Sprintf("size=%d sha256=%s", len(pngBytes), hexSHA(pngBytes))),
					interoptest.PartLine(4, "data", "", dataType, `json={"k":[1,2],"s":"x"}`),
				}, "\n")
				data := `{"k": [1, 2], "s": "x"}`
				if !async {
					// The same value from a file (--data @FILE).
					f := filepath.Join(t.TempDir(), "value.json")
					writePrivate(f, []byte(data+"\n"))
					data = "@" + f
				}
				args := []string{"--url", js.URL(m.mount, interoptest.AgentParts), "look", "--file", csv, "--file", png, "--data", data, "--poll-interval", "100ms"}
				var ctxID string
				if async {
					r := h.run(append([]string{"send-async"}, args...)...)
					r.expect(t, ExitOK)
					ctxID = strings.TrimSpace(r.stdout)
					os.Remove(csv)
					os.Remove(png)
					r = h.run("result", ctxID, "--wait", "--timeout", "30s")
					r.expect(t, ExitOK)
					if r.stdout != want+"\n" {
						t.Fatalf("stdout\n%s\nwant\n%s", r.stdout, want)
					}
				} else {
					r := h.run(append([]string{"send", "--json"}, args...)...)
					r.expect(t, ExitOK)
					d := decodeTask(t, r.stdout)
					if *d.Reply != want || len(d.Parts) != 1 || d.Parts[0].Source != "message" || d.Parts[0].Text != want {
						t.Fatalf("reply\n%s\nwant\n%s\nparts %+v", *d.Reply, want, d.Parts)
					}
					ctxID = d.ContextID
				}
				rec := loadRecord(t, h, ctxID)
				wantParts := []store.Part{
					{Kind: "file", Name: "table.csv", MediaType: "text/csv", Size: int64(len(csvBytes)), SHA256: hexSHA(csvBytes)},
					{Kind: "file", Name: "dot.png", MediaType: "image/png", Size: int64(len(pngBytes)), SHA256: hexSHA(pngBytes)},
					{Kind: "data", MediaType: "application/json", Size: 19, SHA256: hexSHA([]byte(`{"k":[1,2],"s":"x"}`))},
				}
				if fmt.Sprint(rec.Parts) != fmt.Sprint(wantParts) || rec.Message != "" {
					t.Errorf("record parts %+v, message %q; want %+v", rec.Parts, rec.Message, wantParts)
				}
				raw, _ := os.ReadFile(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", ctxID+".json"))
				if strings.Contains(string(raw), base64.StdEncoding.EncodeToString(pngBytes)) || strings.Contains(string(raw), "ada,1") {
					t.Error("the record holds a file's content")
				}
				// The worker removes the spool just after it writes the final
				// record, which result may read first: look once it is gone.
				waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
				if spooled, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "spool", "*")); len(spooled) != 0 {
					t.Errorf("the spool is still there: %v", spooled)
				}
			})
		}
	}
}

// TestPartsAlone: a message of files or data with no text. With no
// argument and stdin a terminal, stdin is not read (a pipe nobody writes
// to stands for the terminal: reading it would hang) and the parts go
// alone; so they do with an empty stdin (piped, or "-"), in the
// foreground and through a detached worker. Without parts an empty
// message is still refused (exit 2), before anything is recorded.
func TestPartsAlone(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	csvBytes := []byte("name,n\nada,1\n")
	want := interoptest.PartLine(1, "raw", "table.csv", "text/csv", fmt.Sprintf("size=%d sha256=%s", len(csvBytes), hexSHA(csvBytes)))
	for _, c := range []struct {
		name, mount, command string
		terminal             bool
		args                 []string
	}{
		{"terminal, foreground, HTTP+JSON", interoptest.MountREST, "send", true, nil},
		{"terminal, send-async, v1.0", interoptest.MountV1, "send-async", true, nil},
		{"empty stdin, foreground, v0.3", interoptest.MountV03, "send", false, nil},
		{"empty stdin with -, send-async, HTTP+JSON", interoptest.MountREST, "send-async", false, []string{"-"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			csv := filepath.Join(t.TempDir(), "table.csv")
			writePrivate(csv, csvBytes)
			if c.terminal {
				pr, pw := io.Pipe()
				defer pw.Close()
				h.stdinR, h.stdinTTY = pr, true
			}
			r := h.run(append([]string{c.command, "--url", js.URL(c.mount, interoptest.AgentParts), "--file", csv, "--poll-interval", "100ms"}, c.args...)...)
			r.expect(t, ExitOK)
			if strings.Contains(r.stderr, "type the message") {
				t.Errorf("asked for a message: %q", r.stderr)
			}
			ctxID := ""
			if c.command == "send-async" {
				ctxID = strings.TrimSpace(r.stdout)
				h.stdinR, h.stdinTTY = nil, false
				r = h.run("result", ctxID, "--wait", "--timeout", "30s")
				r.expect(t, ExitOK)
			}
			if r.stdout != want+"\n" {
				t.Fatalf("stdout %q, want %q", r.stdout, want)
			}
			if ctxID == "" {
				ctxID = strings.Fields(strings.TrimPrefix(r.stderr, "task "))[0]
			}
			if rec := loadRecord(t, h, ctxID); rec.State != store.Completed || rec.MessageSize != 0 || len(rec.Parts) != 1 || rec.Parts[0].Name != "table.csv" || rec.Workers != 1 {
				t.Errorf("record %+v", rec)
			}
			waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
		})
	}
	h := newHarness(t, nil)
	r := h.run("send", "--url", js.URL(interoptest.MountV1, interoptest.AgentParts), "--json")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stdout, "the message is empty") {
		t.Errorf("%s", r.stdout)
	}
	if recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json")); len(recs) != 0 {
		t.Errorf("recorded: %v", recs)
	}
}

// TestPartsRefusedBeforeSending: Agent Builder agents take text only, a
// file over the cap, a path that is not a file and data that is not JSON
// are each one line and exit 2, and nothing is recorded or sent.
func TestPartsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	dir := t.TempDir()
	small, big := filepath.Join(dir, "a.txt"), filepath.Join(dir, "big.bin")
	writePrivate(small, []byte("hello"))
	f, _ := os.Create(big)
	f.Truncate(11 << 20)
	f.Close()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"Kibana and a file", []string{"send", "elastic-ai-agent", "hi", "--file", small}, "Agent Builder agents take text only: --file and --data cannot be sent to them; nothing was sent"},
		{"Kibana and data", []string{"send-async", "elastic-ai-agent", "hi", "--data", `{"a":1}`}, "Agent Builder agents take text only"},
		{"over the cap", []string{"send", "elastic-ai-agent", "hi", "--file", big}, "file " + big + " is 11 MiB, over the 10 MiB cap on a file sent in a message"},
		{"a directory", []string{"send", "elastic-ai-agent", "hi", "--file", dir}, "is a directory, not a regular file"},
		{"no such file", []string{"send", "elastic-ai-agent", "hi", "--file", filepath.Join(dir, "nope")}, "no such file"},
		{"not JSON", []string{"send", "elastic-ai-agent", "hi", "--data", "{nope"}, `--data "{nope" is not one JSON value: invalid character 'n'`},
		{"a data file not JSON", []string{"send", "elastic-ai-agent", "hi", "--data", "@" + small}, "--data @" + small + " is not one JSON value"},
		{"no such data file", []string{"send", "elastic-ai-agent", "hi", "--data", "@" + filepath.Join(dir, "nope.json")}, "nope.json: no such file"},
		{"--out a file", []string{"send", "elastic-ai-agent", "hi", "--out", small}, "is not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sim)
			r := h.run(append(tc.args, "--json")...)
			r.expect(t, ExitUsage)
			var doc struct{ Error errorDoc }
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || !strings.Contains(doc.Error.Message, tc.want) || doc.Error.Hint == "" || doc.Error.Code != "usage" {
				t.Fatalf("%v %s", err, r.stdout)
			}
			r = h.run(tc.args...)
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "hint: ") {
				t.Errorf("stderr is not one line and a hint: %q", r.stderr)
			}
			if recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json")); len(recs) != 0 {
				t.Errorf("records: %v", recs)
			}
		})
	}
	if n := sim.TotalRuns(); n != 0 {
		t.Errorf("%d runs on the server, want none", n)
	}
}

// TestReplyFilesSaved: the files agent's answer, a task whose artifact
// holds a text, two files, a file by URL and data, then the status text
// "files attached": the text (artifact then status) on stdout, each file
// saved (beside the record, or in --out by a detached worker) and named
// on stderr and in --json with its size and SHA-256, the data as sent;
// fetch from another state directory saves and shows the same.
func TestReplyFilesSaved(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	png, _ := base64.StdEncoding.DecodeString(interoptest.FilesPNG)
	for _, m := range partsMounts {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			url := js.URL(m.mount, interoptest.AgentFiles)
			h := newHarness(t, nil)
			r := h.run("send", "--url", url, "files please", "--poll-interval", "100ms")
			r.expect(t, ExitOK)
			if want := interoptest.FilesIntro + "\n" + interoptest.FilesStatus + "\n"; r.stdout != want {
				t.Errorf("stdout %q, want %q", r.stdout, want)
			}
			for _, w := range []string{"file hello.txt (text/plain, 27 bytes) saved to ", "file pixel.png (image/png, 70 bytes) saved to ",
				"file report.pdf (application/pdf) at " + interoptest.FilesURL + ", not downloaded", "37 bytes): in --json's parts"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			out := t.TempDir()
			r = h.run("send-async", "--url", url, "files please", "--out", out, "--poll-interval", "100ms")
			r.expect(t, ExitOK)
			r = h.run("result", strings.TrimSpace(r.stdout), "--wait", "--timeout", "30s", "--json")
			r.expect(t, ExitOK)
			d := decodeTask(t, r.stdout)
			checkFilesParts(t, d, png, out)
			// From another machine: fetch reads the task and saves its files
			// (by its id in A2A 0.3, which lists no tasks).
			other := newHarness(t, nil)
			fetchArgs := []string{"fetch", d.ContextID, "--url", url, "--json"}
			if m.mount == interoptest.MountV03 {
				fetchArgs = []string{"fetch", "--task", d.TaskID, "--url", url, "--json"}
			}
			fr := other.run(fetchArgs...)
			fr.expect(t, ExitOK)
			fd := decodeTask(t, fr.stdout)
			checkFilesParts(t, fd, png, filepath.Join(other.env["A2A_COURIER_STATE_DIR"], "replies"))
			// A second fetch reads the reply again, and keeps the files
			// saved the first time: none saved twice.
			again := other.run(fetchArgs...)
			again.expect(t, ExitOK)
			ad := decodeTask(t, again.stdout)
			for i := range fd.Parts {
				if ad.Parts[i].Path != fd.Parts[i].Path {
					t.Errorf("part %d saved again: %q, first %q", i, ad.Parts[i].Path, fd.Parts[i].Path)
				}
			}
			if saved, _ := filepath.Glob(filepath.Join(other.env["A2A_COURIER_STATE_DIR"], "replies", "*.files", "*")); len(saved) != 2 {
				t.Errorf("files saved: %v, want hello.txt and pixel.png once", saved)
			}
			waitWorkersGone(h.env["A2A_COURIER_STATE_DIR"], 10*time.Second)
		})
	}
}

func checkFilesParts(t *testing.T, d taskDoc, png []byte, dir string) {
	t.Helper()
	if *d.Reply != interoptest.FilesIntro+"\n"+interoptest.FilesStatus || len(d.Parts) != 6 {
		t.Fatalf("reply %q, parts %+v", *d.Reply, d.Parts)
	}
	want := []struct {
		source, kind, name, mediaType string
		content                       []byte
	}{
		{"artifact", "text", "", "", []byte(interoptest.FilesIntro)},
		{"artifact", "file", "hello.txt", "text/plain", []byte(interoptest.FilesText)},
		{"artifact", "file", "pixel.png", "image/png", png},
		{"artifact", "file", "report.pdf", "application/pdf", nil},
		{"artifact", "data", "", "application/json", []byte(interoptest.FilesData)},
		{"status", "text", "", "", []byte(interoptest.FilesStatus)},
	}
	for i, w := range want {
		p := d.Parts[i]
		// (A2A 0.3 data parts carry no media type.)
		if p.Source != w.source || p.Kind != w.kind || p.Name != w.name || p.MediaType != w.mediaType && w.kind == "file" {
			t.Errorf("part %d: %+v, want %+v", i, p, w)
			continue
		}
		switch {
		case w.kind == "text" && p.Text != string(w.content):
			t.Errorf("part %d text %q", i, p.Text)
		case w.kind == "data" && compactJSON(p.Data) != interoptest.FilesData:
			t.Errorf("part %d data %s", i, p.Data)
		case w.kind == "file" && w.content == nil && (p.URL != interoptest.FilesURL || p.Path != ""):
			t.Errorf("part %d: %+v", i, p)
		case w.kind == "file" && w.content != nil:
			got, err := os.ReadFile(p.Path)
			if err != nil || string(got) != string(w.content) || p.Size != int64(len(w.content)) || p.SHA256 != hexSHA(w.content) || !strings.HasPrefix(p.Path, dir+string(filepath.Separator)) {
				t.Errorf("part %d: %+v, read %v (want it in %s)", i, p, err, dir)
			}
		}
	}
}

func compactJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}
