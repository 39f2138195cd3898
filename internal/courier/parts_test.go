package courier

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/internal/fifotest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A queued record whose spool went away, no longer holds what the record
// says it sent, or is not a spool the store wrote (a FIFO, which would
// block the worker for ever; a link to /dev/zero, which has no end; a
// file over the most its parts can take) is not sent: it ends failed, at
// once, saying so, and the agent never sees the message (its context
// lists no task).
func TestRunRefusesASpoolThatChanged(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ra, err := client.ResolveAgentWith(ctx, nil, js.URL(interoptest.MountV1, interoptest.AgentParts), client.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	target := store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding)}
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("the notes"), 0o600)
	for _, damage := range []string{"removed", "changed", "a FIFO", "a link to /dev/zero", "over the cap"} {
		t.Run(damage, func(t *testing.T) {
			t.Parallel()
			// Each its own bound: the subtests run after this function
			// returns, and under load they waited past a shared one.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := newEngine(t)
			parts, err := Attach([]string{file}, []string{`{"n": 1}`})
			if err != nil {
				t.Fatal(err)
			}
			rec := queued(t, c, Message{Agent: "parts", Target: target, Text: "look", Parts: parts, PollInterval: 50 * time.Millisecond, MaxWait: time.Minute})
			spool := filepath.Join(c.Store.Dir(), "spool", rec.ContextID+"."+rec.MessageID+".parts")
			why := map[string]string{"a FIFO": "the spool is a named pipe (FIFO), not a regular file",
				"a link to /dev/zero": "the spool is a symbolic link, not a regular file", "over the cap": "the spool is over the "}[damage]
			switch damage {
			case "removed":
				os.Remove(spool)
			case "changed":
				b, _ := os.ReadFile(spool)
				os.WriteFile(spool, []byte(strings.Replace(string(b), `"data":"eyJuIjoxfQ=="`, `"data":"eyJuIjoyfQ=="`, 1)), 0o600)
			case "a FIFO":
				os.Remove(spool)
				if err := fifotest.Make(spool); err != nil {
					t.Fatal(err)
				}
				// Should the worker open it for reading and wait, this
				// writer, once the test is over, lets it go.
				t.Cleanup(func() {
					if f, err := os.OpenFile(spool, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				})
			case "a link to /dev/zero":
				os.Remove(spool)
				os.Symlink("/dev/zero", spool)
			case "over the cap":
				f, _ := os.OpenFile(spool, os.O_WRONLY, 0)
				f.Truncate(spoolCap(rec.Parts) + 1) // sparse
				f.Close()
			}
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			var got *store.Record
			done := make(chan struct{})
			go func() {
				defer close(done)
				got, err = c.Run(ctx, h, Work{Command: "worker"})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the run did not end: it is reading the spool")
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Reason, why) {
				t.Errorf("reason %q does not say %q", got.Reason, why)
			}
			if got.State != store.Failed || got.SentAt != nil || !strings.Contains(got.Reason, "no longer in the state directory as they were recorded") ||
				!strings.HasSuffix(got.Reason, "nothing was sent; send the message again") {
				t.Fatalf("%s: %s (sent %v)", got.State, got.Reason, got.SentAt)
			}
			if damage == "changed" && !strings.Contains(got.Reason, "part 2, data, changed") {
				t.Errorf("reason %q", got.Reason)
			}
			a, _ := c.A2A(target, "")
			if tasks, err := a.ContextTasks(ctx, rec.ContextID, false); err != nil || len(tasks) != 0 {
				t.Errorf("the agent has %d tasks of the context (%v)", len(tasks), err)
			}
			if _, err := os.Stat(spool); !os.IsNotExist(err) {
				t.Errorf("the spool is still there: %v", err)
			}
		})
	}
}

// A reply's parts as the record keeps them: small data and texts inline; a
// data part over maxInlinePart saved as a .json file beside the record
// (its size and hash kept), and texts over it in all left to the reply, so
// that the record every listing reads stays small.
func TestRecordKeepsLargePartsOutOfLine(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	big := []byte(`{"rows":"` + strings.Repeat("r", maxInlinePart) + `"}`)
	small := []byte(`{"ok": true}`)
	long := strings.Repeat("t", maxInlinePart+1)
	for _, tc := range []struct {
		name, reply string
		parts       []client.ReplyPart
		dataInline  bool
		textKept    bool
	}{
		{"small", "short", []client.ReplyPart{{Part: client.Part{Kind: client.PartText, Text: "short"}}, {Part: client.DataPart(small)}}, true, true},
		{"large", long + "\ndone", []client.ReplyPart{{Part: client.Part{Kind: client.PartText, Text: long}}, {Part: client.DataPart(big)}}, false, false},
		// An input-required task's reply is its question: a large artifact
		// text it does not hold stays in its part.
		{"large, not in the reply", "which one?", []client.ReplyPart{{Part: client.Part{Kind: client.PartText, Text: long}}, {Part: client.DataPart(big)}}, false, true},
	} {
		x := &store.Record{ContextID: "ctx-" + strings.ReplaceAll(strings.ReplaceAll(tc.name, " ", ""), ",", ""), MessageID: "m-" + tc.name, Reply: tc.reply}
		if err := keepReplyParts(c.Store, x, tc.parts); err != nil {
			t.Fatal(err)
		}
		text, data := x.ReplyParts[0], x.ReplyParts[1]
		if (text.Text != "") != tc.textKept || text.Size != int64(len(tc.parts[0].Text)) {
			t.Errorf("%s: text part %+v", tc.name, text)
		}
		if tc.dataInline {
			if string(data.Data) != `{"ok":true}` || data.Path != "" {
				t.Errorf("%s: data part %+v", tc.name, data)
			}
			continue
		}
		saved, err := os.ReadFile(data.Path)
		if data.Data != nil || err != nil || string(saved) != string(big) || data.Size != int64(len(big)) || data.SHA256 != sha256Hex(big) ||
			filepath.Base(data.Path) != "data.json" {
			t.Errorf("%s: data part %+v (saved %d bytes, %v)", tc.name, data, len(saved), err)
		}
		if raw, _ := json.Marshal(x); len(raw) > 4096+len(x.Reply)+len(text.Text) {
			t.Errorf("%s: the record is %d bytes", tc.name, len(raw))
		}
	}
}

// The largest message the checks let through spools within the cap its
// reader uses (spoolCap), and reads back whole: files up to MaxPartsBytes
// together, names and media types of 255 bytes that JSON escapes six
// bytes a byte, and many small data parts, whose framing outweighs them.
func TestLargestSpoolReadsBack(t *testing.T) {
	t.Parallel()
	c := newEngine(t)
	name := strings.Repeat("<", 255)
	mediaType := "text/" + strings.Repeat("&", 250)
	file := make([]byte, client.MaxFilePartBytes)
	for i := range file {
		file[i] = byte(i)
	}
	var large []client.Part
	for len(large)*len(file) < MaxPartsBytes-len(file) {
		large = append(large, client.Part{Kind: client.PartFile, Name: name, MediaType: mediaType, Bytes: file})
	}
	rest := MaxPartsBytes - len(large)*len(file)
	large = append(large, client.Part{Kind: client.PartFile, Name: name, MediaType: mediaType, Bytes: file[:rest]})
	var small []client.Part
	for range 20000 {
		small = append(small, client.DataPart([]byte("1")))
	}
	for i, parts := range [][]client.Part{large, small} {
		rec := &store.Record{ContextID: fmt.Sprintf("ctx-%d", i), MessageID: "m", Parts: describeParts(parts)}
		if err := c.spoolParts(rec, parts); err != nil {
			t.Fatalf("%d parts: %v", len(parts), err)
		}
		got, err := c.spooledParts(rec)
		if err != nil || len(got) != len(parts) {
			t.Fatalf("%d parts: read back %d, %v", len(parts), len(got), err)
		}
		b, _ := os.ReadFile(filepath.Join(c.Store.Dir(), "spool", rec.ContextID+".m.parts"))
		t.Logf("%d parts: spool %d bytes, cap %d", len(parts), len(b), spoolCap(rec.Parts))
	}
}
