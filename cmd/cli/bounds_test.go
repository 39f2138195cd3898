package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2a-courier/a2a-courier/store"
)

// Hostile generic agents against the whole command: answers whose parts,
// part names, chunks or listings are unbounded, and answers for another
// context (issue 23). Each is a real loopback server and a real run of
// the command (a detached worker where one does the work).

// boundAgent is a generic A2A agent on loopback (0.3, or 1.0 with v10)
// whose answers the test writes: stream (message/stream, as SSE), send
// (message/send), get (tasks/get), list (ListTasks, params given). ctx is
// the contextId the last message named.
type boundAgent struct {
	srv       *httptest.Server
	v10       bool
	streaming bool
	stream    func(w io.Writer, id, ctx string)
	send, get func(w io.Writer, id, ctx string)
	list      func(w io.Writer, id string, params gjson.Result)
	sends     atomic.Int32
	gets      atomic.Int32
}

func newBoundAgent(t *testing.T, mod func(a *boundAgent)) *boundAgent {
	t.Helper()
	a := &boundAgent{}
	mod(a)
	var last atomic.Value
	last.Store("")
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if a.v10 {
				fmt.Fprintf(w, `{"name":"B","supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{}}`, a.srv.URL+"/")
				return
			}
			fmt.Fprintf(w, `{"name":"B","protocolVersion":"0.3.0","url":%q,"capabilities":{"streaming":%v}}`, a.srv.URL+"/", a.streaming)
			return
		}
		body, _ := io.ReadAll(r.Body)
		id := gjson.GetBytes(body, "id").Raw
		if c := gjson.GetBytes(body, "params.message.contextId").String(); c != "" {
			last.Store(c)
		}
		ctx := last.Load().(string)
		switch m := gjson.GetBytes(body, "method").String(); {
		case m == "message/stream" && a.stream != nil:
			a.sends.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			a.stream(w, id, ctx)
		case (m == "message/send" || m == "SendMessage") && a.send != nil:
			a.sends.Add(1)
			a.send(w, id, ctx)
		case (m == "tasks/get" || m == "GetTask") && a.get != nil:
			a.gets.Add(1)
			a.get(w, id, ctx)
		case m == "ListTasks" && a.list != nil:
			a.list(w, id, gjson.GetBytes(body, "params"))
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func rpcOf(w io.Writer, id, result string) {
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// fileParts is n file parts named by name(i), each holding "part i".
func fileParts(n int, name func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"kind":"file","file":{"name":%q,"mimeType":"text/plain","bytes":%q}}`, name(i), base64.StdEncoding.EncodeToString([]byte(fmt.Sprint("part ", i))))
	}
	return strings.Join(parts, ",")
}

func messageOf(ctx, parts string) string {
	return fmt.Sprintf(`{"kind":"message","role":"agent","messageId":"r-1","contextId":%q,"parts":[%s]}`, ctx, parts)
}

// TestPartMetadataStaysSmall: a file part named 4 MiB of '<' (and a media
// type of a megabyte) makes a reply whose record, stderr line and
// document stay small: the name is cut to 255 bytes where it is read, the
// media type dropped, and '<' is one byte in the record, not six.
func TestPartMetadataStaysSmall(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("<", 4<<20)
	a := newBoundAgent(t, func(a *boundAgent) {
		a.send = func(w io.Writer, id, ctx string) {
			rpcOf(w, id, messageOf(ctx, fmt.Sprintf(`{"kind":"file","file":{"name":%q,"mimeType":%q,"bytes":"aGk="}}`, name, "text/"+strings.Repeat("x", 1<<20))))
		}
	})
	h := newHarness(t, nil)
	r := h.run("send", "--url", a.srv.URL, "hi")
	r.expect(t, ExitOK)
	if len(r.stderr) > 2000 || !strings.Contains(r.stderr, "file "+strings.Repeat("<", 252)+"… (unknown type, 2 bytes) saved to ") {
		t.Fatalf("stderr of %d bytes: %.400s", len(r.stderr), r.stderr)
	}
	recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %v", recs)
	}
	if fi, _ := os.Stat(recs[0]); fi.Size() > 8<<10 {
		t.Errorf("a record of %d bytes", fi.Size())
	}
	rec := loadRecord(t, h, strings.TrimSuffix(filepath.Base(recs[0]), ".json"))
	if len(rec.ReplyParts) != 1 || len(rec.ReplyParts[0].Name) != 255 || rec.ReplyParts[0].MediaType != "" || rec.ReplyParts[0].Path == "" {
		t.Fatalf("parts %+v", rec.ReplyParts)
	}
	if b, err := os.ReadFile(rec.ReplyParts[0].Path); err != nil || string(b) != "hi" || len(filepath.Base(rec.ReplyParts[0].Path)) > 200 {
		t.Errorf("file %s: %q %v", rec.ReplyParts[0].Path, b, err)
	}
	r = h.run("result", rec.ContextID, "--json")
	r.expect(t, ExitOK)
	if len(r.stdout) > 4000 {
		t.Errorf("a document of %d bytes", len(r.stdout))
	}
}

// TestRepliesOfManyParts: a reply of more than 1,000 parts is over the
// answer cap, however small: the task ends expired and lost (exit 6),
// saying so, and no file is saved. A reply of 1,000 parts of one name
// into an --out directory that holds a file of that name already is
// saved whole, every part its own file.
func TestRepliesOfManyParts(t *testing.T) {
	t.Parallel()
	t.Run("1,001 parts", func(t *testing.T) {
		t.Parallel()
		a := newBoundAgent(t, func(a *boundAgent) {
			a.send = func(w io.Writer, id, ctx string) {
				rpcOf(w, id, messageOf(ctx, fileParts(1001, func(i int) string { return fmt.Sprintf("f%d.txt", i) })))
			}
		})
		h := newHarness(t, nil)
		out := t.TempDir()
		r := h.run("send", "--url", a.srv.URL, "hi", "--json", "--out", out)
		r.expect(t, ExitTaskFailed)
		d := decodeTask(t, r.stdout)
		if d.State != "expired" || d.Error == nil || d.Error.Code != "task_lost" || !strings.Contains(d.Reason, "more than the 1000 parts") || d.Resume != "" {
			t.Fatalf("%+v %+v", d, d.Error)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 || a.sends.Load() != 1 {
			t.Errorf("%d files saved, %d sends", len(entries), a.sends.Load())
		}
	})
	t.Run("1,000 parts of one name", func(t *testing.T) {
		t.Parallel()
		a := newBoundAgent(t, func(a *boundAgent) {
			a.send = func(w io.Writer, id, ctx string) {
				rpcOf(w, id, messageOf(ctx, fileParts(1000, func(int) string { return "report.txt" })))
			}
		})
		h := newHarness(t, nil)
		out := t.TempDir()
		writePrivate(filepath.Join(out, "report.txt"), []byte("an earlier reply's"))
		r := h.run("send", "--url", a.srv.URL, "hi", "--json", "--out", out)
		r.expect(t, ExitOK)
		d := decodeTask(t, r.stdout)
		seen := map[string]bool{}
		for i, p := range d.Parts {
			b, err := os.ReadFile(p.Path)
			if err != nil || string(b) != fmt.Sprint("part ", i) || seen[p.Path] {
				t.Fatalf("part %d at %s: %q %v", i, p.Path, b, err)
			}
			seen[p.Path] = true
		}
		if entries, _ := os.ReadDir(out); len(d.Parts) != 1000 || len(entries) != 1001 {
			t.Fatalf("%d parts, %d files", len(d.Parts), len(entries))
		}
	})
}

// TestReplyThatCannotBeKept: a reply whose file cannot be saved (its --out
// path became a file while the agent worked) ends expired. When the agent
// answered with a task, the record keeps the task, and the resume command
// reads it again (A2A 0.3: no task list, so only by the task); a Message is
// kept nowhere, and the task is lost, with no resume to a fetch that could
// never read it.
func TestReplyThatCannotBeKept(t *testing.T) {
	t.Parallel()
	file := `{"kind":"file","file":{"name":"r.txt","mimeType":"text/plain","bytes":"aGk="}}`
	for _, asTask := range []bool{false, true} {
		t.Run(fmt.Sprintf("a task: %v", asTask), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			a := newBoundAgent(t, func(a *boundAgent) {
				a.send = func(w io.Writer, id, ctx string) {
					if a.sends.Load() == 1 {
						writePrivate(out, []byte("in the way"))
					}
					if asTask {
						rpcOf(w, id, fmt.Sprintf(`{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[%s]}]}`, ctx, file))
						return
					}
					rpcOf(w, id, messageOf(ctx, file))
				}
				a.get = func(w io.Writer, id, ctx string) {
					rpcOf(w, id, fmt.Sprintf(`{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"completed"},"artifacts":[{"artifactId":"a","parts":[%s]}]}`, ctx, file))
				}
			})
			h := newHarness(t, nil)
			r := h.run("send", "--url", a.srv.URL, "hi", "--json", "--out", out)
			d := decodeTask(t, r.stdout)
			if !asTask {
				r.expect(t, ExitTaskFailed)
				if d.State != "expired" || d.Resume != "" || d.Error == nil || d.Error.Code != "task_lost" || !strings.Contains(d.Reason, "answered with a message, which agents do not keep") {
					t.Fatalf("%+v %+v", d, d.Error)
				}
				return
			}
			r.expect(t, ExitStillRunning)
			if d.State != "expired" || d.TaskID != "t-1" || d.Resume != "a2a-courier fetch "+d.ContextID+" --json" {
				t.Fatalf("%+v", d)
			}
			os.Remove(out)
			r = h.run(strings.Fields(d.Resume)[1:]...)
			r.expect(t, ExitOK)
			if d := decodeTask(t, r.stdout); d.State != "completed" || len(d.Parts) != 1 || !strings.HasPrefix(d.Parts[0].Path, out+string(filepath.Separator)) {
				t.Fatalf("%+v", d)
			}
		})
	}
}

// TestStreamedChunksPastTheCap: 40 MiB of artifact chunks of 256 KiB,
// each far under the 32 MiB answer cap, from an agent whose task keeps no
// artifacts: the reply cannot be read within the cap, so the task ends
// expired and lost (exit 6), in the foreground and in a worker, never
// completed with 40 MiB (or 32) of it.
func TestStreamedChunksPastTheCap(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", 256<<10)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async %v", async), func(t *testing.T) {
			t.Parallel()
			a := newBoundAgent(t, func(a *boundAgent) {
				a.streaming = true
				a.stream = func(w io.Writer, id, ctx string) {
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":\"t-1\",\"contextId\":%q,\"status\":{\"state\":\"working\"}}}\n\n", id, ctx)
					for i := range 160 {
						if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"artifact-update\",\"taskId\":\"t-1\",\"contextId\":%q,\"append\":%v,\"artifact\":{\"artifactId\":\"a\",\"parts\":[{\"kind\":\"text\",\"text\":%q}]}}}\n\n", id, ctx, i > 0, text); err != nil {
							return
						}
					}
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t-1\",\"contextId\":%q,\"final\":true,\"status\":{\"state\":\"completed\"}}}\n\n", id, ctx)
				}
				a.get = func(w io.Writer, id, ctx string) {
					rpcOf(w, id, fmt.Sprintf(`{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"completed"}}`, ctx))
				}
			})
			h := newHarness(t, nil)
			var r result
			if async {
				r = h.run("send-async", "--url", a.srv.URL, "hi")
				r.expect(t, ExitOK)
				r = h.run("result", strings.TrimSpace(r.stdout), "--wait", "--timeout", "60s", "--json")
			} else {
				r = h.run("send", "--url", a.srv.URL, "hi", "--json")
			}
			r.expect(t, ExitTaskFailed)
			d := decodeTask(t, r.stdout)
			if d.State != "expired" || d.Error == nil || d.Error.Code != "task_lost" || d.Reply != nil || !strings.Contains(d.Reason, "more than the 32 MiB cap") {
				t.Fatalf("%+v %+v", d, d.Error)
			}
			if a.sends.Load() != 1 || a.gets.Load() != 1 {
				t.Errorf("%d sends, %d reads", a.sends.Load(), a.gets.Load())
			}
			if files, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "replies", "*")); len(files) != 0 {
				t.Errorf("replies kept: %v", files)
			}
		})
	}
}

// TestTaskReadForAnotherContext: a task that, read, names another context
// than the message's is not its reply: following it stops (expired, the
// reason naming the context it gave), and fetch of the context refuses it
// as not this context's, never completed.
func TestTaskReadForAnotherContext(t *testing.T) {
	t.Parallel()
	a := newBoundAgent(t, func(a *boundAgent) {
		a.send = func(w io.Writer, id, ctx string) {
			rpcOf(w, id, fmt.Sprintf(`{"kind":"task","id":"t-1","contextId":%q,"status":{"state":"working"}}`, ctx))
		}
		a.get = func(w io.Writer, id, ctx string) {
			rpcOf(w, id, `{"kind":"task","id":"t-1","contextId":"someone-else","status":{"state":"completed","message":{"kind":"message","role":"agent","messageId":"s","parts":[{"kind":"text","text":"not yours"}]}}}`)
		}
	})
	h := newHarness(t, nil)
	r := h.run("send", "--url", a.srv.URL, "hi", "--json", "--poll-interval", "50ms")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	if d.State != "expired" || d.Reply != nil || !strings.Contains(d.Reason, `answered for context "someone-else", not for the context `+d.ContextID) {
		t.Fatalf("%+v", d)
	}
	r = h.run("fetch", d.ContextID, "--json")
	if r.code != ExitUnexpected || strings.Contains(r.stdout, "not yours") || !strings.Contains(r.stdout, `answered for context \"someone-else\"`) ||
		!strings.Contains(r.stdout, "belongs to another conversation") {
		t.Fatalf("fetch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if rec := loadRecord(t, h, d.ContextID); rec.State != store.Expired || rec.Reply != "" {
		t.Errorf("record %s %q", rec.State, rec.Reply)
	}
}

// TestRemoteListingPastItsBound: an agent whose ListTasks ignores
// pageSize, 5,000 tasks a page and always a next page, is listed to the
// bound (2,000 tasks, one page read) and the listing says it stops there.
func TestRemoteListingPastItsBound(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	a := newBoundAgent(t, func(a *boundAgent) {
		a.v10 = true
		a.list = func(w io.Writer, id string, params gjson.Result) {
			pages.Add(1)
			n := params.Get("pageToken").Int()
			tasks := make([]string, 5000)
			for i := range tasks {
				tasks[i] = fmt.Sprintf(`{"id":"t-%d-%d","contextId":"c-%d","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T10:00:00Z"}}`, n, i, i)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[%s],"nextPageToken":"%d"}}`, id, strings.Join(tasks, ","), n+1)
		}
	})
	h := newHarness(t, nil)
	r := h.run("tasks", "--url", a.srv.URL, "--limit", "0", "--json")
	r.expect(t, ExitOK)
	var doc struct {
		Tasks []json.RawMessage `json:"tasks"`
		More  bool              `json:"more"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Tasks) != 2000 || !doc.More || pages.Load() != 1 {
		t.Fatalf("%d tasks, more %v, %d pages, %v", len(doc.Tasks), doc.More, pages.Load(), err)
	}
	r = h.run("tasks", "--url", a.srv.URL, "--limit", "0")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "the newest 2000 tasks, where the listing stops; the agent has more") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestMediaTypeWithControlsIsDropped: a media type whose quoted parameter
// carries ESC, BEL, DEL or a tab (mime.ParseMediaType takes them) is no
// media type worth keeping: the record keeps none and the line about the
// file says "unknown type", so no terminal sequence rides on it.
func TestMediaTypeWithControlsIsDropped(t *testing.T) {
	t.Parallel()
	for _, mt := range []string{"text/plain; a=\"\x1b]52;c;aGk=\x07\"", "text/plain; a=\"x\x7fy\"", "text/plain; a=\"x\ty\""} {
		a := newBoundAgent(t, func(a *boundAgent) {
			a.send = func(w io.Writer, id, ctx string) {
				quoted, _ := json.Marshal(mt)
				rpcOf(w, id, messageOf(ctx, fmt.Sprintf(`{"kind":"file","file":{"name":"a.txt","mimeType":%s,"bytes":"aGk="}}`, quoted)))
			}
		})
		h := newHarness(t, nil)
		r := h.run("send", "--url", a.srv.URL, "hi", "--out", t.TempDir())
		r.expect(t, ExitOK)
		if !strings.Contains(r.stderr, "file a.txt (unknown type, 2 bytes) saved to ") {
			t.Errorf("media type %q: stderr %q", mt, r.stderr)
		}
		recs, _ := filepath.Glob(filepath.Join(h.env["A2A_COURIER_STATE_DIR"], "tasks", "*.json"))
		if len(recs) != 1 {
			t.Fatalf("records %v", recs)
		}
		rec := loadRecord(t, h, strings.TrimSuffix(filepath.Base(recs[0]), ".json"))
		if len(rec.ReplyParts) != 1 || rec.ReplyParts[0].MediaType != "" {
			t.Errorf("media type %q: parts %+v", mt, rec.ReplyParts)
		}
	}
}
