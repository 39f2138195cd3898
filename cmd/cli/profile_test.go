package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
)

// twoKibanas is a config file whose default profile names one simulator
// and whose profile lab names another, and a harness with no Kibana in
// its environment: the profile decides which Kibana a command reaches.
func twoKibanas(t *testing.T, v agentbuildertest.Version) (h *harness, def, lab *agentbuildertest.Server) {
	t.Helper()
	def = startSim(t, func(o *agentbuildertest.Options) { o.Version = v })
	lab = startSim(t, func(o *agentbuildertest.Options) {
		o.Version = v
		o.Agents = append(o.Agents, agentbuildertest.Agent{ID: "slow", Name: "Slow", Description: "Slow.", RunTime: time.Hour, Reply: "late"})
	})
	h = newHarness(t, nil)
	writeConfig(t, h, "profiles:\n  default:\n    kibana_url: "+def.URL+"\n    api_key: "+testKey+"\n"+
		"  lab:\n    kibana_url: "+lab.URL+"\n    api_key: "+testKey+"\n", 0o600)
	h.env["A2A_COURIER_MAX_WAIT"] = "3m"
	return h, def, lab
}

// TestRecordKeepsItsProfile: a task sent with --profile lab is read there
// later without --profile (fetch, show, result, cancel): its record
// names the profile; the command says so on stderr and in --json's note;
// the commands it prints carry --profile lab; and the other Kibana, the
// configured one, is never read. Before, fetch read the configured
// Kibana, warned "sent to another Kibana", and answered "no reply yet"
// (exit 8) with a resume that lacked --profile lab. On 9.6 cancel asks
// the task's Kibana to stop the run, and reaches it so.
func TestRecordKeepsItsProfile(t *testing.T) {
	t.Parallel()
	for _, v := range []agentbuildertest.Version{agentbuildertest.V95, agentbuildertest.V96} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			testRecordKeepsItsProfile(t, v)
		})
	}
}

func testRecordKeepsItsProfile(t *testing.T, v agentbuildertest.Version) {
	h, def, lab := twoKibanas(t, v)
	r := h.run("send-async", "--profile", "lab", "slow", "hi", "--json")
	r.expect(t, ExitOK)
	var started struct {
		ContextID string `json:"context_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &started); err != nil || started.ContextID == "" {
		t.Fatalf("send-async: %v %s", err, r.stdout)
	}
	ctxID := started.ContextID
	if rec := loadRecord(t, h, ctxID); rec.Target.Profile != "lab" {
		t.Fatalf("the record's target names profile %q", rec.Target.Profile)
	}
	waitUntil(t, "the message to reach lab's agent", 20*time.Second, func() bool { return lab.Runs(ctxID) == 1 })
	before := def.Requests(agentbuildertest.RouteConversation) + def.Requests(agentbuildertest.RouteConversations)

	r = h.run("fetch", ctxID)
	r.expect(t, ExitStillRunning)
	if !strings.Contains(r.stderr, "profile lab") || strings.Contains(r.stderr, "another Kibana") ||
		!strings.Contains(r.stderr, "a2a-courier fetch --profile lab "+ctxID) {
		t.Errorf("fetch: %s", r.stderr)
	}
	r = h.run("fetch", ctxID, "--json")
	r.expect(t, ExitStillRunning)
	d := decodeTask(t, r.stdout)
	if !strings.Contains(d.Note, "profile lab") || !strings.Contains(d.Resume, "--profile lab") {
		t.Errorf("fetch --json: note %q, resume %q", d.Note, d.Resume)
	}
	r = h.run("result", ctxID, "--json")
	r.expect(t, ExitStillRunning)
	if d := decodeTask(t, r.stdout); !strings.Contains(d.Resume, "--profile lab") || !strings.Contains(d.Note, "profile lab") {
		t.Errorf("result --json: note %q, resume %q", d.Note, d.Resume)
	}
	r = h.run("show", ctxID)
	if !strings.Contains(r.stderr, "profile lab") || r.code == ExitNotFound {
		t.Errorf("show: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if after := def.Requests(agentbuildertest.RouteConversation) + def.Requests(agentbuildertest.RouteConversations); after != before {
		t.Errorf("the configured Kibana, not the task's, was read %d times", after-before)
	}
	if v == agentbuildertest.V96 {
		// The run is asked to stop by its task, which the worker records
		// once Kibana's answer to the send names it: until then cancel
		// rightly says Kibana has not named it yet (seen under load).
		waitUntil(t, "the worker to record the run's task", 20*time.Second, func() bool { return loadRecord(t, h, ctxID).TaskID != "" })
	}
	r = h.run("cancel", ctxID)
	r.expect(t, ExitOK)
	if v == agentbuildertest.V96 && (!strings.Contains(r.stderr, "profile lab") || strings.Contains(r.stderr, "not the one it was sent to")) {
		t.Errorf("cancel: %s", r.stderr)
	}
}

// TestRecordOfAnotherKibanaIsNotReadElsewhere: when the record's Kibana is
// not the configured one and no profile of the config file names it (the
// profile now names another Kibana, or the task was sent with
// --kibana-url), fetch and show refuse (exit 2) with a hint naming how to
// reach it, and read nothing.
func TestRecordOfAnotherKibanaIsNotReadElsewhere(t *testing.T) {
	t.Parallel()
	h, def, lab := twoKibanas(t, agentbuildertest.V95)
	r := h.run("send", "--profile", "lab", "elastic-ai-agent", "hi", "--json")
	r.expect(t, ExitOK)
	ctxID := decodeTask(t, r.stdout).ContextID
	// A follow-up without --profile would go to the configured Kibana: it
	// is refused, and the hint goes on with the task's profile.
	r = h.run("send", "elastic-ai-agent", "--context", ctxID, "more")
	checkOneLineError(t, r, ExitUsage, "")
	if !strings.Contains(r.stderr, "a2a-courier send --profile lab elastic-ai-agent --context "+ctxID) || strings.Contains(r.stderr, "--kibana-url") {
		t.Errorf("follow-up: %s", r.stderr)
	}
	// The same task sent with --kibana-url: no profile is recorded.
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := writePrivate(keyFile, []byte(testKey)); err != nil {
		t.Fatal(err)
	}
	r = h.run("send", "--kibana-url", lab.URL, "--api-key-file", keyFile, "elastic-ai-agent", "hi", "--json")
	r.expect(t, ExitOK)
	bare := decodeTask(t, r.stdout).ContextID
	if rec := loadRecord(t, h, bare); rec.Target.Profile != "" {
		t.Fatalf("a task sent with --kibana-url records profile %q", rec.Target.Profile)
	}
	// lab now names the configured Kibana.
	writeConfig(t, h, "profiles:\n  default:\n    kibana_url: "+def.URL+"\n    api_key: "+testKey+"\n"+
		"  lab:\n    kibana_url: "+def.URL+"\n    api_key: "+testKey+"\n", 0o600)
	before := def.Requests(agentbuildertest.RouteConversation) + def.Requests(agentbuildertest.RouteConversations)
	for _, c := range []struct {
		id, hint string
	}{{ctxID, "--kibana-url " + lab.URL}, {bare, "--kibana-url " + lab.URL}} {
		for _, cmd := range []string{"fetch", "show"} {
			r = h.run(cmd, c.id)
			checkOneLineError(t, r, ExitUsage, "")
			if !strings.Contains(r.stderr, "was sent to another Kibana") || !strings.Contains(r.stderr, c.hint) {
				t.Errorf("%s %s: %s", cmd, c.id, r.stderr)
			}
		}
		r = h.run("fetch", c.id, "--json")
		r.expect(t, ExitUsage)
		var doc struct {
			Error errorDoc `json:"error"`
		}
		if json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.Error.Code != "config" || !strings.Contains(doc.Error.Hint, c.hint) {
			t.Errorf("fetch --json: %s", r.stdout)
		}
	}
	if after := def.Requests(agentbuildertest.RouteConversation) + def.Requests(agentbuildertest.RouteConversations); after != before {
		t.Errorf("the configured Kibana, not the task's, was read %d times", after-before)
	}
	// Profile lab gone, another that names lab's Kibana: the hint names
	// it, and named, it reads the task.
	writeConfig(t, h, "profiles:\n  default:\n    kibana_url: "+def.URL+"\n    api_key: "+testKey+"\n"+
		"  lab2:\n    kibana_url: "+lab.URL+"\n    api_key: "+testKey+"\n", 0o600)
	r = h.run("fetch", ctxID)
	checkOneLineError(t, r, ExitUsage, "was sent to another Kibana")
	if !strings.Contains(r.stderr, "--profile lab2") {
		t.Errorf("fetch with profile lab gone: %s", r.stderr)
	}
	r = h.run("fetch", "--profile", "lab2", ctxID)
	r.expect(t, ExitOK)
}
