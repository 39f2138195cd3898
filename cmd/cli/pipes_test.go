package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/store"
)

// onlyRecord is the one task record of a state directory.
func onlyRecord(t *testing.T, p *proc) *store.Record {
	t.Helper()
	recs, err := p.store().List()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records (%v), want 1", len(recs), err)
	}
	return recs[0]
}

// TestClosedStreamLosesNoSend: a caller (an assistant's tool runner) that
// closes the pipe of send's stderr, or of its stdout, before send writes
// to it. A write to a closed stream must not decide whether the message is
// sent: the process is not killed by SIGPIPE, the message runs once, and
// the record ends completed, its reply there for result even when stdout
// could not take it. Then the conversation takes a follow-up.
func TestClosedStreamLosesNoSend(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V95, agentbuildertest.V96} {
		for _, closed := range []string{"stderr", "stdout", "stdout --json"} {
			t.Run(string(v)+"/"+closed, func(t *testing.T) {
				t.Parallel()
				sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = v })
				p := newProc(t, sim)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				text := "a closed " + closed
				args := []string{"send", "elastic-ai-agent", text}
				if closed != "stdout" {
					args = append(args, "--json")
				}
				c := p.cmd(ctx, "", args...)
				rd, wr, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				rd.Close() // nobody will ever read this stream
				var out, errb bytes.Buffer
				c.Stdout, c.Stderr = &out, &errb
				if closed == "stderr" {
					c.Stderr = wr
				} else {
					c.Stdout = wr
				}
				err = c.Start()
				wr.Close()
				if err != nil {
					t.Fatal(err)
				}
				c.Wait()
				ws := c.ProcessState.Sys().(syscall.WaitStatus)
				if ws.Signaled() {
					t.Fatalf("send was killed by %v; stdout %q stderr %q", ws.Signal(), out.String(), errb.String())
				}
				rec := onlyRecord(t, p)
				if rec.State != store.Completed || rec.Reply != "Echo: "+text || rec.SentAt == nil {
					t.Fatalf("record %s %q", rec.State, rec.Reply)
				}
				if n := sim.Runs(rec.ContextID); n != 1 {
					t.Fatalf("%d runs", n)
				}
				code := ws.ExitStatus()
				if closed == "stderr" {
					if d := decodeTask(t, out.String()); code != ExitOK || d.State != "completed" || d.ContextID != rec.ContextID {
						t.Fatalf("exit %d, %+v", code, d)
					}
				} else {
					// The reply did not reach the caller: not exit 0, and
					// stderr says where it is, in --json mode too (the
					// error document would go to the closed stdout).
					said := afterStarted(errb.String())
					if code != ExitUnexpected || !strings.Contains(said, "could not be written to stdout") || !strings.Contains(said, "a2a-courier result "+rec.ContextID+"` prints it again") {
						t.Fatalf("exit %d, stderr %q", code, errb.String())
					}
					r := p.run("result", rec.ContextID)
					r.expect(t, ExitOK)
					if strings.TrimSpace(r.stdout) != "Echo: "+text {
						t.Fatalf("result printed %q", r.stdout)
					}
				}
				r := p.run("send", "elastic-ai-agent", "--context", rec.ContextID, "and then?", "--json")
				r.expect(t, ExitOK)
				if n := sim.Runs(rec.ContextID); n != 2 {
					t.Errorf("%d runs after the follow-up", n)
				}
			})
		}
	}
}

// TestSendAsyncToAClosedStdout: send-async whose caller closed its stdout
// pipe cannot hand over the contextId there: it exits 1 (code output) with
// one line on stderr, in --json mode too, that says the task is recorded
// and how to find it; the task goes on (a worker sends it once). It used
// to exit 0 (the contextId only in the started line on stderr), and 1 in
// --json mode with nothing said.
func TestSendAsyncToAClosedStdout(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"text", "json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, nil)
			p := newProc(t, sim)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := []string{"send-async", "elastic-ai-agent", "nobody reads my id"}
			if mode == "json" {
				args = append(args, "--json")
			}
			c := p.cmd(ctx, "", args...)
			rd, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			rd.Close()
			var errb bytes.Buffer
			c.Stdout, c.Stderr = wr, &errb
			err = c.Start()
			wr.Close()
			if err != nil {
				t.Fatal(err)
			}
			c.Wait()
			ws := c.ProcessState.Sys().(syscall.WaitStatus)
			rec := onlyRecord(t, p)
			said := strings.TrimSpace(afterStarted(errb.String()))
			if ws.Signaled() || ws.ExitStatus() != ExitUnexpected || strings.Count(said, "\n") != 0 && mode == "json" ||
				!strings.Contains(said, "task "+rec.ContextID+" is recorded") || !strings.Contains(said, "could not be written to stdout") ||
				!strings.Contains(said, "`a2a-courier tasks") || !strings.Contains(said, "a2a-courier result "+rec.ContextID) {
				t.Fatalf("exit %d (signaled %v), stderr %q", ws.ExitStatus(), ws.Signaled(), errb.String())
			}
			r := p.run("result", rec.ContextID, "--wait", "--timeout", "30s")
			r.expect(t, ExitOK)
			if strings.TrimSpace(r.stdout) != "Echo: nobody reads my id" || sim.Runs(rec.ContextID) != 1 {
				t.Fatalf("result %q, %d runs", r.stdout, sim.Runs(rec.ContextID))
			}
		})
	}
}

// holdingFront is a TLS front of a simulator: each connection is served
// (one request, then closed, so that every request makes a new one) unless
// hold says to keep it: it is then never handshaken, so the client never
// gets the connection, and is handed to the test on held.
type holdingFront struct {
	srv    *httptest.Server
	held   chan net.Conn
	caFile string
}

type holdListener struct {
	net.Listener
	hold func() bool
	held chan net.Conn
}

func (l *holdListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || !l.hold() {
			return c, err
		}
		l.held <- c
	}
}

func newHoldingFront(t *testing.T, sim *agentbuildertest.Server, hold func() bool) *holdingFront {
	t.Helper()
	u, _ := url.Parse(sim.URL)
	f := &holdingFront{held: make(chan net.Conn, 16)}
	f.srv = httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(u))
	f.srv.Listener = &holdListener{Listener: f.srv.Listener, hold: hold, held: f.held}
	f.srv.Config.SetKeepAlivesEnabled(false)
	f.srv.StartTLS()
	t.Cleanup(func() {
		f.srv.Close()
		for {
			select {
			case c := <-f.held:
				c.Close()
			default:
				return
			}
		}
	})
	f.caFile = filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
	if err := writePrivate(f.caFile, ca); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSendKilledBeforeItsRequestLeftIsSentOnce: send is killed (SIGKILL)
// after its record is written and while its connection is being made
// (held before the TLS handshake), so nothing can have left. The record
// says so, queued with its text; a worker that result --wait revives sends
// it once and the reply arrives, and the conversation takes a follow-up.
// (Before: the record was created sending, so nothing ever sent it: it
// expired after the maximum wait, and follow-ups were refused until then.)
func TestSendKilledBeforeItsRequestLeftIsSentOnce(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V95, agentbuildertest.V96} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			sim := startSim(t, func(o *agentbuildertest.Options) { o.Version = v })
			p := newProc(t, sim)
			var released atomic.Bool
			stateDir := p.env["A2A_COURIER_STATE_DIR"]
			front := newHoldingFront(t, sim, func() bool {
				// A new connection once the record exists is the send's.
				st, err := store.Open(stateDir)
				if err != nil {
					return false
				}
				recs, _ := st.List()
				return !released.Load() && len(recs) > 0
			})
			p.env["KIBANA_URL"] = front.srv.URL
			p.env["A2A_COURIER_CA_CERT"] = front.caFile
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const text = "killed before it left"
			c := p.cmd(ctx, "", "send", "elastic-ai-agent", text, "--json")
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			var conn net.Conn
			select {
			case conn = <-front.held:
			case <-time.After(30 * time.Second):
				c.Process.Kill()
				t.Fatal("send never connected to send its message")
			}
			rec := onlyRecord(t, p)
			c.Process.Signal(syscall.SIGKILL)
			c.Wait()
			if rec.State != store.Queued || rec.Message != text || rec.SentAt != nil {
				t.Fatalf("while connecting the record said %s (message %q, sent_at %v)", rec.State, rec.Message, rec.SentAt)
			}
			if after := onlyRecord(t, p); after.State != store.Queued || after.Message != text {
				t.Fatalf("after the kill the record says %s", after.State)
			}
			if n := sim.Runs(rec.ContextID); n != 0 {
				t.Fatalf("%d runs before any request left", n)
			}
			released.Store(true)
			conn.Close()
			// A follow-up waits for it: refused, with the command that has
			// it sent.
			r := p.run("send", "elastic-ai-agent", "--context", rec.ContextID, "too soon", "--json")
			r.expect(t, ExitUsage)
			if d := decodeTask(t, r.stdout); d.Error == nil || !strings.Contains(d.Error.Hint, "a2a-courier result "+rec.ContextID+" --wait") {
				t.Fatalf("%+v", d)
			}
			r = p.run("result", rec.ContextID, "--wait", "--timeout", "40s", "--json")
			r.expect(t, ExitOK)
			if d := decodeTask(t, r.stdout); d.State != "completed" || d.Reply == nil || *d.Reply != "Echo: "+text {
				t.Fatalf("%+v", d)
			}
			if n := sim.Runs(rec.ContextID); n != 1 {
				t.Fatalf("%d runs", n)
			}
			r = p.run("send", "elastic-ai-agent", "--context", rec.ContextID, "and then?", "--json")
			r.expect(t, ExitOK)
			if n := sim.Runs(rec.ContextID); n != 2 {
				t.Errorf("%d runs after the follow-up", n)
			}
			p.waitWorkersExit()
		})
	}
}

// TestStartedLineRunsAsTheCaller: the started line's command runs as the
// caller ran send or send-async (--json, --timeout, as resume does), so
// that a caller that reads it gets what it parses. It used to name
// `result <ctx> --wait` without --json.
func TestStartedLineRunsAsTheCaller(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	p := newProc(t, sim)
	for _, tc := range []struct {
		args []string
		tail string
	}{
		{[]string{"send", "elastic-ai-agent", "plain"}, " --wait"},
		{[]string{"send", "elastic-ai-agent", "in json", "--json"}, " --wait --json"},
		{[]string{"send", "elastic-ai-agent", "with a wait", "--json", "--timeout", "45s"}, " --wait --timeout 45s --json"},
		{[]string{"send-async", "elastic-ai-agent", "later", "--json"}, " --wait --json"},
	} {
		r := p.run(tc.args...)
		r.expect(t, ExitOK)
		first, _, _ := strings.Cut(r.stderr, "\n")
		id := startedContext(first)
		if want := "task " + id + " started; its reply: a2a-courier result " + id + tc.tail; id == "" || first != want {
			t.Errorf("%v: started line %q, want %q", tc.args, first, want)
		}
	}
}
