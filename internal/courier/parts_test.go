package courier

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/interop/interoptest"
	"github.com/a2a-courier/a2a-courier/store"
)

// A queued record whose spool went away, or no longer holds what the
// record says it sent, is not sent: it ends failed, saying so, and the
// agent never sees the message (its context lists no task).
func TestRunRefusesASpoolThatChanged(t *testing.T) {
	t.Parallel()
	js := interoptest.StartJS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel) // (the subtests run after this function returns)
	ra, err := client.ResolveAgentWith(ctx, nil, js.URL(interoptest.MountV1, interoptest.AgentParts), client.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	target := store.Target{Kind: store.TargetA2A, URL: ra.CardURL, Endpoint: ra.Endpoint, Dialect: string(ra.Dialect), Binding: string(ra.Binding)}
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("the notes"), 0o600)
	for _, damage := range []string{"removed", "changed"} {
		t.Run(damage, func(t *testing.T) {
			t.Parallel()
			c := newEngine(t)
			parts, err := Attach([]string{file}, []string{`{"n": 1}`})
			if err != nil {
				t.Fatal(err)
			}
			rec := queued(t, c, Message{Agent: "parts", Target: target, Text: "look", Parts: parts, PollInterval: 50 * time.Millisecond, MaxWait: time.Minute})
			spool := filepath.Join(c.Store.Dir(), "spool", rec.ContextID+"."+rec.MessageID+".parts")
			if damage == "removed" {
				os.Remove(spool)
			} else {
				b, _ := os.ReadFile(spool)
				os.WriteFile(spool, []byte(strings.Replace(string(b), `"data":"eyJuIjoxfQ=="`, `"data":"eyJuIjoyfQ=="`, 1)), 0o600)
			}
			h, err := c.Store.Lock(rec.ContextID)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			got, err := c.Run(ctx, h, Work{Command: "worker"})
			if err != nil {
				t.Fatal(err)
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
