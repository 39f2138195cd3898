package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/buildinfo"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/internal/serve"
	"github.com/a2a-courier/a2a-courier/internal/simulator/agentbuilder"
	"github.com/a2a-courier/a2a-courier/store"
)

// The tests of this file build one command from a Factory of their own
// (unitFactory) and run it with a runF that receives its Options as
// parsed: no server, no state directory, no process; milliseconds.

// errNotInAUnitTest is what a unit test's Factory gives for what a
// command's flags must not need.
var errNotInAUnitTest = errors.New("not in a unit test")

// unitFactory is a Factory on buffers whose engine and settings are never
// there; stdout and stderr are what the command printed.
func unitFactory(jsonOut bool) (f *Factory, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	p := &Process{Stdout: stdout, Stderr: stderr}
	p.fillDefaults()
	pr := newPrinter(p, jsonOut)
	return &Factory{
		Process:        p,
		Printer:        func() *printer { return pr },
		Settings:       func() (*config.Settings, error) { return nil, errNotInAUnitTest },
		KibanaSettings: func() (*config.Settings, error) { return nil, errNotInAUnitTest },
		Engine:         func() (*courier.Courier, error) { return nil, errNotInAUnitTest },
		Store:          func() (*store.Store, error) { return nil, errNotInAUnitTest },
		Caches:         func() *courier.Courier { return nil },
		Caller:         func() nextstep.Caller { return nextstep.Caller{} },
	}, stdout, stderr
}

// unitReporter is the reporter of f's command line: its printer and
// caller, no settings loaded.
func unitReporter(f *Factory) func(*taskView) *reporter {
	return func(v *taskView) *reporter {
		if v == nil {
			v = &taskView{}
		}
		return &reporter{p: f.Process, printer: f.Printer, caller: f.Caller, set: &settings{p: f.Process}, view: v}
	}
}

// parse runs cmd with args, its output discarded, and returns its error.
func parse(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.Execute()
}

// prune's flags reach its Options as given; an argument is refused before
// it runs.
func TestPruneFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	for _, tc := range []struct {
		args      []string
		olderThan string
		dryRun    bool
		refused   bool
	}{
		{[]string{"--older-than", "30d", "--dry-run"}, "30d", true, false},
		{[]string{"--older-than=12h"}, "12h", false, false},
		{nil, "", false, false},
		{[]string{"extra"}, "", false, true},
		{[]string{"--older-than"}, "", false, true},
	} {
		var got *pruneOptions
		err := parse(newCmdPrune(f, func(o *pruneOptions) error { got = o; return nil }), tc.args...)
		switch {
		case tc.refused && (err == nil || got != nil):
			t.Errorf("%q: err %v, ran %v", tc.args, err, got != nil)
		case !tc.refused && (err != nil || got == nil || got.OlderThan != tc.olderThan || got.DryRun != tc.dryRun):
			t.Errorf("%q: err %v, options %+v", tc.args, err, got)
		}
	}
}

// prune without --older-than, or with an age it cannot read, is a usage
// error before the state directory is opened.
func TestPruneRunRefusesWithoutAnAge(t *testing.T) {
	t.Parallel()
	for _, age := range []string{"", "soon"} {
		f, _, _ := unitFactory(false)
		opened := 0
		opts := &pruneOptions{Printer: f.Printer, OlderThan: age, Engine: func() (*courier.Courier, error) { opened++; return nil, errNotInAUnitTest }}
		ce := classify(pruneRun(opts))
		if ce.exit != ExitUsage || opened != 0 {
			t.Errorf("%q: exit %d (%s), engine opened %d times", age, ce.exit, ce.message, opened)
		}
	}
}

// version takes no argument, and prints what the build says.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	ran := 0
	if err := parse(newCmdVersion(f, func(*versionOptions) error { ran++; return nil })); err != nil || ran != 1 {
		t.Errorf("no argument: %v, ran %d", err, ran)
	}
	if err := parse(newCmdVersion(f, func(*versionOptions) error { ran++; return nil }), "x"); err == nil || ran != 1 {
		t.Errorf("an argument: %v, ran %d", err, ran)
	}
	for _, jsonOut := range []bool{false, true} {
		f, stdout, _ := unitFactory(jsonOut)
		opts := &versionOptions{Printer: f.Printer, Info: func() buildinfo.Info {
			return buildinfo.Info{Version: "v1.2.3", Go: "go1.26", Platform: "linux/amd64", Commit: "abc", CommitTime: "2026-01-01T00:00:00Z", Modified: true}
		}}
		if err := versionRun(opts); err != nil {
			t.Fatal(err)
		}
		want := "a2a-courier v1.2.3 (go1.26, linux/amd64)\ncommit abc 2026-01-01T00:00:00Z (modified)\n"
		if jsonOut {
			want = `"version": "v1.2.3"`
		}
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("json %v: %q, want %q", jsonOut, stdout.String(), want)
		}
	}
}

// discover's --timeout reaches its Options; an argument is refused.
func TestDiscoverFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *discoverOptions
	run := func(_ context.Context, o *discoverOptions) error { got = o; return nil }
	if err := parse(newCmdDiscover(f, run), "--timeout", "5s"); err != nil || got == nil || got.Timeout != 5*time.Second {
		t.Errorf("--timeout 5s: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdDiscover(f, run)); err != nil || got == nil || got.Timeout != defaultReadTimeout {
		t.Errorf("no flag: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdDiscover(f, run), "an-agent"); err == nil || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
}

// discover's run, against the simulator, with the settings of its
// Options (no config file, no environment): the agents' ids, names and
// kinds, sorted by id, in the --json document.
func TestDiscoverRunListsTheSimulatorsAgents(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	f, stdout, _ := unitFactory(true)
	s := &config.Settings{URL: sim.URL, APIKey: client.Secret(testKey), Sources: map[string]string{}}
	settings := func() (*config.Settings, error) { return s, nil }
	opts := &discoverOptions{Process: f.Process, Printer: f.Printer, Settings: settings, KibanaSettings: settings, Timeout: time.Minute,
		Kibana: func(s *config.Settings) (*client.Kibana, error) {
			return client.NewKibana(client.KibanaConfig{URL: s.URL, APIKey: s.APIKey, HTTPClient: http.DefaultClient})
		}}
	if err := discoverRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Agents []discovered }
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	want := simOptions().Agents
	if len(doc.Agents) != len(want) {
		t.Fatalf("agents %+v, want %d", doc.Agents, len(want))
	}
	names := map[string]string{}
	for _, ag := range want {
		names[ag.ID] = ag.Name
	}
	for i, ag := range doc.Agents {
		if name, ok := names[ag.ID]; !ok || ag.Name != name || ag.Kind != "kibana" || i > 0 && doc.Agents[i-1].ID > ag.ID {
			t.Errorf("agent %d: %+v (the simulator's: %v)", i, ag, names)
		}
	}
}

// history's flags reach its Options as given.
func TestHistoryFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *historyOptions
	run := func(_ context.Context, o *historyOptions) error { got = o; return nil }
	if err := parse(newCmdHistory(f, run), "--agent", "elastic-ai-agent", "--limit", "0", "--timeout", "2m"); err != nil || got == nil ||
		got.Agent != "elastic-ai-agent" || got.Limit != 0 || got.Timeout != 2*time.Minute {
		t.Errorf("flags: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdHistory(f, run)); err != nil || got == nil || got.Limit != defaultHistoryLimit || got.Agent != "" {
		t.Errorf("defaults: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdHistory(f, run), "--limit", "x"); err == nil || got != nil {
		t.Errorf("--limit x: %v, ran %v", err, got != nil)
	}
}

// history's run: a bad --limit or --agent is refused before any server is
// asked; an agent the simulator does not have exits 5 with the hint that
// names discover.
func TestHistoryRun(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(true)
	asked := 0
	noServer := func() (*config.Settings, error) { asked++; return nil, errNotInAUnitTest }
	for _, o := range []historyOptions{{Limit: -1}, {Agent: "no/such", Limit: 1}} {
		o.Printer, o.KibanaSettings, o.Store = f.Printer, noServer, f.Store
		if ce := classify(historyRun(context.Background(), &o)); ce.exit != ExitUsage || asked != 0 {
			t.Errorf("%+v: exit %d (%s), settings asked %d times", o, ce.exit, ce.message, asked)
		}
	}
	sim := startSim(t, nil)
	s := &config.Settings{URL: sim.URL, APIKey: client.Secret(testKey), Sources: map[string]string{}}
	o := &historyOptions{Printer: f.Printer, Store: f.Store, Agent: "nobody", Limit: 5, Timeout: time.Minute,
		KibanaSettings: func() (*config.Settings, error) { return s, nil },
		Kibana: func(s *config.Settings) (*client.Kibana, error) {
			return client.NewKibana(client.KibanaConfig{URL: s.URL, APIKey: s.APIKey, HTTPClient: http.DefaultClient})
		}}
	ce := classify(historyRun(context.Background(), o))
	if ce.exit != ExitNotFound || ce.code != "not_found" || !strings.Contains(ce.hint.String(), "`a2a-courier discover` lists") {
		t.Errorf("unknown agent: exit %d, %s, hint %q", ce.exit, ce.message, ce.hint)
	}
}

// get-card takes an agent or --url (not both, not neither), and its
// agent flags, into its Options.
func TestGetCardFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *getCardOptions
	run := func(_ context.Context, o *getCardOptions) error { got = o; return nil }
	if err := parse(newCmdGetCard(f, run), "research", "--timeout", "3s", "--protocol", "1.0", "--binding", "rest"); err != nil || got == nil ||
		got.Agent != "research" || got.Timeout != 3*time.Second || got.AgentFlags.protocol != "1.0" || got.AgentFlags.binding != "rest" {
		t.Errorf("a peer: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdGetCard(f, run), "--url", "https://agents.example.com/r", "--no-stream"); err != nil || got == nil ||
		got.Agent != "" || got.AgentFlags.url != "https://agents.example.com/r" || !got.AgentFlags.noStream {
		t.Errorf("--url: %v, %+v", err, got)
	}
	for _, args := range [][]string{nil, {"a", "b"}, {"a", "--url", "https://x.example.com"}} {
		got = nil
		err := parse(newCmdGetCard(f, run), args...)
		if ce := classify(err); err == nil || ce.exit != ExitUsage || got != nil {
			t.Errorf("%q: %v (exit %d), ran %v", args, err, ce.exit, got != nil)
		}
	}
}

// get-card's run prints the card the resolver reads: here the App's,
// on the simulator, its settings from an environment of the test's own.
func TestGetCardRunPrintsTheCard(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	env := map[string]string{"KIBANA_URL": sim.URL, "KIBANA_API_KEY": testKey, "A2A_COURIER_CONFIG_DIR": t.TempDir(), "A2A_COURIER_STATE_DIR": t.TempDir()}
	f, stdout, _ := unitFactory(false)
	f.Process.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	opts := &getCardOptions{Printer: f.Printer, ResolveTarget: newApp(f.Process).factory().ResolveTarget, Agent: "elastic-ai-agent", Timeout: time.Minute}
	if err := getCardRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "Name:         Elastic AI Agent\n") || !strings.Contains(out, "Description:  ") {
		t.Errorf("card %q", out)
	}
}

// cancel takes a contextId or task id and at most an agent, and its agent
// flags, into its options.
func TestCancelFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *cancelOptions
	run := func(_ context.Context, o *cancelOptions) error { got = o; return nil }
	if err := parse(newCmdCancel(f, run), "t-1", "research", "--timeout", "9s"); err != nil || got == nil ||
		got.id != "t-1" || got.agent != "research" || got.timeout != 9*time.Second {
		t.Errorf("id and peer: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdCancel(f, run), "c-1", "--url", "https://agents.example.com/r"); err != nil || got == nil ||
		got.id != "c-1" || got.agent != "" || got.agentFlags.url != "https://agents.example.com/r" || got.timeout != defaultReadTimeout {
		t.Errorf("--url: %v, %+v", err, got)
	}
	for _, args := range [][]string{nil, {"a", "b", "c"}} {
		got = nil
		if err := parse(newCmdCancel(f, run), args...); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%q: %v, ran %v", args, err, got != nil)
		}
	}
}

// show takes one id, and tells a --round given from none (roundSet).
func TestShowFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *showOptions
	run := func(_ context.Context, o *showOptions) error { got = o; return nil }
	if err := parse(newCmdShow(f, run), "a2a-c1", "--round", "2", "--max-chars", "400"); err != nil || got == nil ||
		got.target != "a2a-c1" || got.round != 2 || !got.roundSet || got.maxChars != 400 || got.allRounds {
		t.Errorf("--round 2: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdShow(f, run), "c1", "--all-rounds"); err != nil || got == nil || got.roundSet || !got.allRounds || got.round != 0 {
		t.Errorf("--all-rounds: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdShow(f, run), "c1", "c2"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("two ids: %v, ran %v", err, got != nil)
	}
}

// config set and unset take the name and value into their options; set
// takes one or two arguments, unset one.
func TestConfigChangeFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *configChangeOptions
	run := func(o *configChangeOptions) error { got = o; return nil }
	if err := parse(newCmdConfigSet(f, run), "space", "prod"); err != nil || got == nil || got.Name != "space" || got.Value != "prod" || !got.HasValue || got.Unset {
		t.Errorf("set space prod: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdConfigSet(f, run), "api-key"); err != nil || got == nil || got.Name != "api-key" || got.HasValue {
		t.Errorf("set api-key: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdConfigUnset(f, run), "space"); err != nil || got == nil || got.Name != "space" || !got.Unset {
		t.Errorf("unset space: %v, %+v", err, got)
	}
	for _, c := range []*cobra.Command{newCmdConfigSet(f, run), newCmdConfigUnset(f, run), newCmdConfigPath(f, run)} {
		got = nil
		if err := parse(c, "a", "b", "c"); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%s a b c: %v, ran %v", c.Name(), err, got != nil)
		}
	}
}

// config set's run on a config file of the test's own: the value is
// written to the profile --profile names; the API key comes from stdin,
// never as an argument; an unknown name is a usage error that writes
// nothing.
func TestConfigSetRun(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a2a-courier", "config.yaml")
	f, _, _ := unitFactory(true)
	opts := func(name, value string, has bool) *configChangeOptions {
		o := configChangeOpts(f)
		o.ConfigPath = func() string { return path }
		o.Flags = func() config.Flags { return config.Flags{Profile: "lab"} }
		o.Name, o.Value, o.HasValue = name, value, has
		return o
	}
	if err := configSetRun(opts("kibana-url", "https://kb.example.com", true)); err != nil {
		t.Fatal(err)
	}
	f.Process.Stdin = strings.NewReader("c2VjcmV0OmtleQ==\n")
	if err := configSetRun(opts("api-key", "", false)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*configChangeOptions{opts("api-key", "c2VjcmV0", true), opts("no-such", "x", true), opts("space", "", false)} {
		if ce := classify(configSetRun(o)); ce.exit != ExitUsage {
			t.Errorf("%s %q: exit %d (%s)", o.Name, o.Value, ce.exit, ce.message)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, "lab:") || !strings.Contains(s, "kibana_url: https://kb.example.com") || !strings.Contains(s, "api_key: c2VjcmV0OmtleQ==") ||
		strings.Contains(s, "no_such") || strings.Contains(s, "api_key: c2VjcmV0\n") {
		t.Errorf("config file:\n%s", s)
	}
}

// tasks: its filters reach its options; --context, --protocol and
// --binding need --url, refused before it runs.
func TestTasksFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *tasksOptions
	run := func(_ context.Context, o *tasksOptions) error { got = o; return nil }
	if err := parse(newCmdTasks(f, run), "--state", "running", "--agent", "a", "--limit", "3"); err != nil || got == nil ||
		got.state != "running" || got.agent != "a" || got.limit != 3 || got.agentFlags.url != "" {
		t.Errorf("local: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdTasks(f, run), "--url", "https://agents.example.com/r", "--context", "c1", "--protocol", "1.0"); err != nil || got == nil ||
		got.contextID != "c1" || got.agentFlags.protocol != "1.0" || got.limit != defaultHistoryLimit {
		t.Errorf("--url: %v, %+v", err, got)
	}
	for _, args := range [][]string{{"--context", "c1"}, {"--binding", "rest"}, {"x"}} {
		got = nil
		if err := parse(newCmdTasks(f, run), args...); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%q: %v, ran %v", args, err, got != nil)
		}
	}
}

// doctor's --timeout bounds each check; it takes no argument.
func TestDoctorFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *doctorOptions
	run := func(_ context.Context, o *doctorOptions) error { got = o; return nil }
	if err := parse(newCmdDoctor(f, run)); err != nil || got == nil || got.timeout != 20*time.Second {
		t.Errorf("default: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdDoctor(f, run), "--timeout", "5s"); err != nil || got == nil || got.timeout != 5*time.Second {
		t.Errorf("--timeout 5s: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdDoctor(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
}

// serve's flags reach its options through runF, with no server started:
// the command and its guardrails' flags, the defaults (loopback, one run
// at a time), and arguments refused (the command goes in --exec).
func TestServeFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	for _, tc := range []struct {
		args    []string
		check   func(o *serveOptions) bool
		refused bool
	}{
		{[]string{"--exec", "muse exec --headless", "--name", "muse", "--skill", "audit: audits logs"}, func(o *serveOptions) bool {
			return o.Exec == "muse exec --headless" && o.Name == "muse" && len(o.skills) == 1 && o.skills[0] == "audit: audits logs" &&
				o.Listen == serve.DefaultListen && o.Concurrency == 1 && o.ResponseWindow == serve.DefaultResponseWindow && !o.Shell
		}, false},
		{[]string{"--exec", "a", "--listen", "0.0.0.0:8790", "--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--tokens-file", "t", "--concurrency", "3", "--shell"}, func(o *serveOptions) bool {
			return o.Listen == "0.0.0.0:8790" && o.TLSCert == "c.pem" && o.TLSKey == "k.pem" && o.TokensFile == "t" && o.Concurrency == 3 && o.Shell
		}, false},
		{[]string{"--exec", "a", "--print-card"}, func(o *serveOptions) bool { return o.printCard }, false},
		{[]string{"--exec", "a", "extra"}, nil, true},
		{[]string{"--concurrency", "many"}, nil, true},
	} {
		var got *serveOptions
		err := parse(newCmdServe(f, func(_ context.Context, o *serveOptions) error { got = o; return nil }), tc.args...)
		switch {
		case tc.refused && (err == nil || got != nil):
			t.Errorf("%q: err %v, ran %v", tc.args, err, got != nil)
		case !tc.refused && (err != nil || got == nil || !tc.check(got)):
			t.Errorf("%q: err %v, options %+v", tc.args, err, got)
		}
	}
}

// config show takes no argument; its run prints the settings of its
// Options with where each came from, the key by its identity only.
func TestConfigShowFlagsAndRun(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	var got *configShowOptions
	run := func(o *configShowOptions) error { got = o; return nil }
	if err := parse(newCmdConfigShow(f, run)); err != nil || got == nil {
		t.Errorf("no argument: %v, ran %v", err, got != nil)
	}
	got = nil
	if err := parse(newCmdConfigShow(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
	s := &config.Settings{Profile: "lab", URL: "https://kb.example.com", APIKey: client.Secret(testKey), Space: "prod",
		Sources: map[string]string{"profile": "flag --profile", "kibana_url": "env KIBANA_URL", "api_key": "env KIBANA_API_KEY"}}
	opts := &configShowOptions{Printer: f.Printer, Settings: func() (*config.Settings, error) { return s, nil },
		ConfigPath: func() string { return "/nowhere/config.yaml" }}
	if err := configShowRun(opts); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Profile          string                `json:"profile"`
		ConfigFile       string                `json:"config_file"`
		ConfigFileExists bool                  `json:"config_file_exists"`
		Settings         map[string]settingDoc `json:"settings"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if doc.Profile != "lab" || doc.ConfigFile != "/nowhere/config.yaml" || doc.ConfigFileExists || doc.Settings["space"].Value != "prod" ||
		doc.Settings["kibana_url"] != (settingDoc{"https://kb.example.com", "env KIBANA_URL"}) || !strings.HasPrefix(doc.Settings["api_key"].Value, "set (identity ") {
		t.Errorf("document %+v", doc)
	}
	if strings.Contains(stdout.String(), testKey) {
		t.Errorf("the key is shown: %s", stdout)
	}
	if ce := classify(configShowRun(&configShowOptions{Printer: f.Printer, Settings: func() (*config.Settings, error) { return nil, errNotInAUnitTest }})); ce.message != errNotInAUnitTest.Error() {
		t.Errorf("settings' error: %+v", ce)
	}
}

// skill install takes --dir or --target and --dry-run; its run writes
// SKILL.md naming the Process's executable, once: a second run leaves an
// up-to-date file alone. skill show takes no argument.
func TestSkillFlagsAndRun(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	var got *skillInstallOptions
	run := func(o *skillInstallOptions) error { got = o; return nil }
	if err := parse(newCmdSkillInstall(f, run), "--dir", "skills", "--dry-run"); err != nil || got == nil || got.dir != "skills" || !got.dryRun || got.target != "" {
		t.Errorf("--dir: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdSkillInstall(f, run), "--target", "claude"); err != nil || got == nil || got.target != "claude" || got.dryRun {
		t.Errorf("--target: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdSkillInstall(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
	var shown *skillShowOptions
	if err := parse(newCmdSkillShow(f, func(o *skillShowOptions) error { shown = o; return nil }), "x"); classify(err).exit != ExitUsage || shown != nil {
		t.Errorf("skill show x: %v, ran %v", err, shown != nil)
	}
	for _, o := range []skillInstallOptions{{}, {dir: "a", target: "claude"}, {target: "no-such"}} {
		o.Process, o.Printer = f.Process, f.Printer
		if ce := classify(skillInstallRun(&o)); ce.exit != ExitUsage {
			t.Errorf("%+v: exit %d (%s)", o, ce.exit, ce.message)
		}
	}
	dir, exe := t.TempDir(), filepath.Join(t.TempDir(), "bin", "a2a-courier")
	f.Process.Executable = func() (string, error) { return exe, nil }
	var actions []string
	for range 2 {
		stdout.Reset()
		if err := skillInstallRun(&skillInstallOptions{Process: f.Process, Printer: f.Printer, dir: dir}); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Path, Action, Binary string }
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Binary != exe || doc.Path != filepath.Join(dir, "a2a-courier", "SKILL.md") {
			t.Fatalf("%v: %s", err, stdout)
		}
		actions = append(actions, doc.Action)
	}
	b, err := os.ReadFile(filepath.Join(dir, "a2a-courier", "SKILL.md"))
	if err != nil || !strings.Contains(string(b), exe) || actions[0] == actions[1] {
		t.Errorf("actions %q; SKILL.md names the binary: %v (%v)", actions, strings.Contains(string(b), exe), err)
	}
}

// mcp takes no argument and refuses --json (stdout is JSON-RPC's); mcp
// install takes --target and --dry-run. Its own files, which no tool
// sends, include the key and token files of the root's flags.
func TestMCPFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	f.Flags = func() config.Flags { return config.Flags{APIKeyFile: "keys/prod.key", TokenFile: "/etc/a2a/token"} }
	var got *mcpOptions
	run := func(_ context.Context, o *mcpOptions) error { got = o; return nil }
	if err := parse(newCmdMCP(f, run)); err != nil || got == nil {
		t.Fatalf("mcp: %v, ran %v", err, got != nil)
	}
	key, _ := filepath.Abs("keys/prod.key")
	token, _ := filepath.Abs("/etc/a2a/token") // C:\etc\a2a\token on Windows
	own := strings.Join(got.ownFiles(), "\n")
	if !strings.Contains(own, key) || !strings.Contains(own, token) {
		t.Errorf("own files:\n%s", own)
	}
	got = nil
	if err := parse(newCmdMCP(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
	fj, _, _ := unitFactory(true)
	if err := parse(newCmdMCP(fj, run)); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("--json: %v, ran %v", err, got != nil)
	}
	var inst *mcpInstallOptions
	irun := func(o *mcpInstallOptions) error { inst = o; return nil }
	if err := parse(newCmdMCPInstall(f, irun), "--target", "cursor", "--dry-run"); err != nil || inst == nil || inst.target != "cursor" || !inst.dryRun {
		t.Errorf("install: %v, %+v", err, inst)
	}
	inst = nil
	if err := parse(newCmdMCPInstall(f, irun), "cursor"); classify(err).exit != ExitUsage || inst != nil {
		t.Errorf("install cursor: %v, ran %v", err, inst != nil)
	}
}

// mcp install's run on a HOME of the test's own: --dry-run prints the
// entry and writes nothing; then the file is created with this binary
// and mcp, and a second run changes nothing. A missing or unknown
// --target is a usage error.
func TestMCPInstallRun(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "A2A_COURIER_CONFIG_DIR": filepath.Join(home, ".config", "a2a-courier"), "A2A_COURIER_STATE_DIR": filepath.Join(home, "state"),
		"USERPROFILE": home, "APPDATA": filepath.Join(home, "AppData", "Roaming"), "LOCALAPPDATA": filepath.Join(home, "AppData", "Local")}
	f, stdout, _ := unitFactory(true)
	f.Process.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	exe := filepath.Join(home, "bin", "a2a-courier")
	f.Process.Executable = func() (string, error) { return exe, nil }
	f.Flags = func() config.Flags { return config.Flags{} }
	opts := func(target string, dry bool) *mcpInstallOptions {
		return &mcpInstallOptions{Process: f.Process, Printer: f.Printer, Flags: f.Flags, target: target, dryRun: dry}
	}
	for _, target := range []string{"", "no-such"} {
		if ce := classify(mcpInstallRun(opts(target, false))); ce.exit != ExitUsage {
			t.Errorf("--target %q: exit %d (%s)", target, ce.exit, ce.message)
		}
	}
	path := filepath.Join(home, ".cursor", "mcp.json")
	var actions []string
	for _, dry := range []bool{true, false, false} {
		stdout.Reset()
		if err := mcpInstallRun(opts("cursor", dry)); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Path, Action, Command string
			Args                  []string
			DryRun                bool `json:"dry_run"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Path != path || doc.Command != exe || len(doc.Args) == 0 || doc.Args[0] != "mcp" || doc.DryRun != dry {
			t.Fatalf("%v: %s", err, stdout)
		}
		_, err := os.Stat(path)
		if written := err == nil; written == dry {
			t.Errorf("dry run %v: file written %v", dry, written)
		}
		actions = append(actions, doc.Action)
	}
	if actions[0] != "created" || actions[1] != "created" || actions[2] != "unchanged" {
		t.Errorf("actions %q", actions)
	}
}

// demo takes --keep and refuses --json and arguments; without a simulator
// (a release build) its run says how to build one in.
func TestDemoFlagsAndRun(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *demoOptions
	run := func(_ context.Context, o *demoOptions) error { got = o; return nil }
	if err := parse(newCmdDemo(f, run), "--keep"); err != nil || got == nil || !got.keep {
		t.Errorf("--keep: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdDemo(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
	fj, _, _ := unitFactory(true)
	if err := parse(newCmdDemo(fj, run)); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("--json: %v, ran %v", err, got != nil)
	}
	if ce := classify(demoRun(context.Background(), &demoOptions{Process: f.Process, Printer: f.Printer})); ce.exit != ExitUsage || !strings.Contains(ce.hint.String(), "-tags simulator") {
		t.Errorf("no simulator: exit %d, %s, hint %q", ce.exit, ce.message, ce.hint)
	}
}

// dev-server's flags reach its options, with the names of those given
// (the simulator's configuration takes only those); its run starts the
// Process's simulator with them and prints its settings, and stops when
// its context ends.
func TestDevServerFlagsAndRun(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	var got *devServerOptions
	run := func(_ context.Context, o *devServerOptions) error { got = o; return nil }
	if err := parse(newCmdDevServer(f, run), "--addr", "127.0.0.1:0", "--version", "9.2", "--fail-runs", "2", "--proxy-cut-after", "3s", "-v"); err != nil || got == nil ||
		got.addr != "127.0.0.1:0" || got.version != "9.2" || got.failRuns != 2 || got.proxyCut != 3*time.Second || !got.verbose {
		t.Fatalf("flags: %v, %+v", err, got)
	}
	cfg, err := devServerConfig(got)
	if err != nil || cfg.Version == nil || *cfg.Version != "9.2" || cfg.FailRuns == nil || *cfg.FailRuns != 2 || cfg.ProxyCutAfter == nil || cfg.IdleCloseAfter != nil || cfg.DataFile != nil {
		t.Errorf("config %+v (%v)", cfg, err)
	}
	got = nil
	if err := parse(newCmdDevServer(f, run), "x"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
	if ce := classify(devServerRun(context.Background(), &devServerOptions{Process: f.Process, Printer: f.Printer})); ce.exit != ExitUsage {
		t.Errorf("no simulator: exit %d (%s)", ce.exit, ce.message)
	}
	f.Process.Simulator = agentbuilder.Start
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // it serves until its context ends: here, at once
	o := &devServerOptions{Process: f.Process, Printer: f.Printer, addr: "127.0.0.1:0", version: "9.3", changed: map[string]bool{"version": true}}
	if err := devServerRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	var doc struct{ URL, Version string }
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || !strings.HasPrefix(doc.URL, "http://127.0.0.1:") || !strings.HasPrefix(doc.Version, "9.3") {
		t.Errorf("%v: %s", err, stdout)
	}
}

// doctor's run with settings that name no Kibana: the configuration
// fails with the set-up steps, the Kibana checks are skipped (no server
// asked), and it exits with the configuration's code.
func TestDoctorRunNotConfigured(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	s := &config.Settings{Profile: "default", Sources: map[string]string{}}
	dir := t.TempDir()
	opts := &doctorOptions{Printer: f.Printer, Caller: f.Caller, Caches: f.Caches, Engine: f.Engine, timeout: time.Minute,
		Settings:       func() (*config.Settings, error) { return s, nil },
		KibanaSettings: func() (*config.Settings, error) { return s, config.RequireKibana(s) },
		ConfigPath:     func() string { return filepath.Join(dir, "config.yaml") },
		Store:          func() (*store.Store, error) { return store.Open(filepath.Join(dir, "state")) },
		Kibana: func(*config.Settings) (*client.Kibana, error) {
			t.Error("a Kibana client was built")
			return nil, errNotInAUnitTest
		}}
	err := doctorRun(context.Background(), opts)
	var doc struct {
		OK     bool
		Checks []struct{ Name, Status string }
		Setup  any
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &doc); jerr != nil {
		t.Fatalf("%v: %s", jerr, stdout)
	}
	if code := exitCodeOf(err); code != ExitUsage || doc.OK || doc.Setup == nil || len(doc.Checks) == 0 || doc.Checks[0].Name != "configuration" || doc.Checks[0].Status != "fail" {
		t.Errorf("exit %d: %s", code, stdout)
	}
	skipped := 0
	for _, c := range doc.Checks {
		if c.Status == "skip" {
			skipped++
		}
	}
	if skipped == 0 {
		t.Errorf("no check skipped: %s", stdout)
	}
}

// exitCodeOf is the exit code Run gives err.
func exitCodeOf(err error) int {
	var ex *exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	if err == nil {
		return ExitOK
	}
	return classify(err).exit
}

// simKibana is an Agent Builder client of the simulator, in the default
// space, with the test's key.
func simKibana(t *testing.T, url string) *client.Kibana {
	t.Helper()
	k, err := client.NewKibana(client.KibanaConfig{URL: url, APIKey: client.Secret(testKey), HTTPClient: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// show's run against the simulator, with a Kibana client of the test's
// own: a contextId is read as conversation a2a-<contextId>; --round picks
// a round; --all-rounds prints each; a conversation that is not there
// exits 5 naming both ids tried; a bad flag is refused before any server
// is asked.
func TestShowRun(t *testing.T) {
	t.Parallel()
	sim := startSim(t, func(o *agentbuildertest.Options) {
		o.Seed = []agentbuildertest.SeedConversation{{ID: "a2a-unit-ctx", AgentID: "audit-agent", Rounds: 2, Title: "Unit"}}
	})
	asked := 0
	opts := func(f *Factory, target string) *showOptions {
		return &showOptions{Printer: f.Printer, Store: f.Store, CallerWith: func(*taskView) nextstep.Caller { return f.Caller() },
			KibanaForRecord: func(rec *store.Record, _ *taskView) (*client.Kibana, string, bool, error) {
				asked++
				if rec != nil {
					t.Errorf("a local record of %s", rec.ContextID)
				}
				return simKibana(t, sim.URL), "default", false, nil
			},
			target: target, timeout: time.Minute}
	}
	f, stdout, _ := unitFactory(true)
	o := opts(f, "unit-ctx")
	o.round, o.roundSet = 1, true
	if err := showRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var doc showDoc
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.ConversationID != "a2a-unit-ctx" || doc.Round != 1 || doc.RoundCount != 2 ||
		doc.Reply == nil || *doc.Reply != "Answer to question 1." || doc.AgentID != "audit-agent" || doc.Title != "Unit" {
		t.Errorf("%v: %s", err, stdout)
	}
	ft, text, _ := unitFactory(false)
	o = opts(ft, "a2a-unit-ctx")
	o.allRounds = true
	if err := showRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	want := "[round 1 of 2: input]\nQuestion 1\n[round 1 of 2: reply]\nAnswer to question 1.\n[round 2 of 2: input]\nQuestion 2\n[round 2 of 2: reply]\nAnswer to question 2.\n"
	if text.String() != want {
		t.Errorf("--all-rounds:\n%s\nwant:\n%s", text, want)
	}
	ce := classify(showRun(context.Background(), opts(f, "no-such-ctx")))
	if ce.exit != ExitNotFound || !strings.Contains(ce.message, "neither a2a-no-such-ctx (contextId no-such-ctx) nor no-such-ctx exists") {
		t.Errorf("missing: exit %d, %s", ce.exit, ce.message)
	}
	before := asked
	for _, bad := range []func(*showOptions){
		func(o *showOptions) { o.round, o.roundSet = 0, true },
		func(o *showOptions) { o.round, o.roundSet, o.allRounds = 1, true, true },
		func(o *showOptions) { o.maxChars = -1 },
		func(o *showOptions) { o.target = "bad id" },
	} {
		o := opts(f, "unit-ctx")
		bad(o)
		if ce := classify(showRun(context.Background(), o)); ce.exit != ExitUsage {
			t.Errorf("%+v: exit %d (%s)", o, ce.exit, ce.message)
		}
	}
	if asked != before {
		t.Errorf("a bad flag asked for the Kibana client %d times", asked-before)
	}
}

// unitEngine is a task engine on a state directory of the test's own,
// for what needs no server.
func unitEngine(t *testing.T, p *Process) *courier.Courier {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return newEngine(p, engineParts{store: st})
}

// cancel's run on a state directory of the test's own: a task not sent yet
// is canceled locally (exit 0, its record canceled, no agent resolved);
// canceled again, it is refused (exit 6); an id with no record and no agent
// exits 5 with the hint that names tasks, or for a conversation id its
// contextId.
func TestCancelRun(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	c := unitEngine(t, f.Process)
	rec := &store.Record{ContextID: "3f6c2e1a-0000-4000-8000-00000000cccc", MessageID: "m", Agent: "research", State: store.Queued, Message: "never sent",
		Target: store.Target{Kind: store.TargetA2A, URL: "http://127.0.0.1:1/agent"}}
	if err := c.Store.Create(rec); err != nil {
		t.Fatal(err)
	}
	opts := func(id string) *cancelOptions {
		return &cancelOptions{Printer: f.Printer, Engine: func() (*courier.Courier, error) { return c, nil }, Reporter: unitReporter(f),
			ResolveTarget: func(context.Context, string, agentFlags) (*target, error) {
				t.Error("an agent was resolved")
				return nil, errNotInAUnitTest
			},
			id: id, timeout: time.Minute}
	}
	if err := cancelRun(context.Background(), opts(rec.ContextID)); err != nil {
		t.Fatal(err)
	}
	got, err := c.Store.Load(rec.ContextID)
	if err != nil || got.State != store.Canceled || got.SentAt != nil || !strings.Contains(stdout.String(), `"state": "canceled"`) {
		t.Errorf("record %+v (%v); stdout %s", got, err, stdout)
	}
	// A canceled task is final: nothing to resume (docs/json.md).
	if strings.Contains(stdout.String(), `"resume"`) {
		t.Errorf("a canceled task's document has a resume: %s", stdout)
	}
	if ce := classify(cancelRun(context.Background(), opts(rec.ContextID))); ce.exit != ExitTaskFailed || ce.code != "not_cancelable" {
		t.Errorf("canceled again: exit %d, %s %s", ce.exit, ce.code, ce.message)
	}
	for id, hint := range map[string]string{"3f6c2e1a-0000-4000-8000-00000000dddd": "`a2a-courier tasks` lists", "a2a-3f6c2e1a-0000-4000-8000-00000000dddd": "its contextId is 3f6c2e1a-0000-4000-8000-00000000dddd"} {
		if ce := classify(cancelRun(context.Background(), opts(id))); ce.exit != ExitNotFound || !strings.Contains(ce.hint.String(), hint) {
			t.Errorf("%s: exit %d, %s, hint %q", id, ce.exit, ce.message, ce.hint)
		}
	}
	if ce := classify(cancelRun(context.Background(), opts("bad id"))); ce.exit != ExitUsage {
		t.Errorf("bad id: exit %d (%s)", ce.exit, ce.message)
	}
}

// tasks' run on a state directory of the test's own: the ledger's rows
// as --json lists them, filtered by state; a bad --state or --limit is
// refused before the engine is asked.
func TestTasksRun(t *testing.T) {
	t.Parallel()
	f, stdout, _ := unitFactory(true)
	c := unitEngine(t, f.Process)
	for i, agent := range []string{"research", "audit-agent"} {
		rec := &store.Record{ContextID: "3f6c2e1a-0000-4000-8000-00000000000" + string(rune('a'+i)), MessageID: "m", Agent: agent, State: store.Queued, Message: "q",
			Target: store.Target{Kind: store.TargetA2A, URL: "http://127.0.0.1:1/agent"}}
		if err := c.Store.Create(rec); err != nil {
			t.Fatal(err)
		}
	}
	asked := 0
	opts := func(state, agent string, limit int) *tasksOptions {
		return &tasksOptions{Process: f.Process, Printer: f.Printer, Engine: func() (*courier.Courier, error) { asked++; return c, nil },
			state: state, agent: agent, limit: limit}
	}
	var doc struct {
		Source string
		Tasks  []taskRow
		Total  int
	}
	if err := tasksRun(context.Background(), opts("running", "audit-agent", 0)); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Source != "local" || doc.Total != 1 || len(doc.Tasks) != 1 ||
		doc.Tasks[0].Agent != "audit-agent" || doc.Tasks[0].State != "queued" || doc.Tasks[0].Target != "a2a" {
		t.Errorf("%v: %s", err, stdout)
	}
	stdout.Reset()
	if err := tasksRun(context.Background(), opts("completed", "", 0)); err != nil || !strings.Contains(stdout.String(), `"total": 0`) {
		t.Errorf("completed: %v, %s", err, stdout)
	}
	before := asked
	for _, o := range []*tasksOptions{opts("no-such", "", 0), opts("", "", -1)} {
		if ce := classify(tasksRun(context.Background(), o)); ce.exit != ExitUsage {
			t.Errorf("%+v: exit %d (%s)", o, ce.exit, ce.message)
		}
	}
	if asked != before {
		t.Errorf("a bad flag asked for the engine")
	}
}

// send's flags reach its options as given (an agent, a text, the waits
// noted as given or not); an agent missing, or a message not quoted, is
// refused before it runs.
func TestSendFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *sendOptions
	run := func(_ context.Context, o *sendOptions) error { got = o; return nil }
	if err := parse(newCmdSend(f, run), "elastic-ai-agent", "hello", "--timeout", "9s", "--context", "c-1", "--file", "a.txt", "--file", "b.txt",
		"--data", "{}", "--out", "d", "--progress", "--max-chars", "5", "--poll-interval", "3s", "--no-stream"); err != nil || got == nil ||
		got.agent != "elastic-ai-agent" || len(got.args) != 1 || got.args[0] != "hello" || got.timeout != 9*time.Second || !got.timeoutSet ||
		got.contextID != "c-1" || len(got.files) != 2 || got.files[1] != "b.txt" || len(got.data) != 1 || got.out != "d" || !got.progress ||
		got.maxChars != 5 || got.pollInterval != 3*time.Second || !got.pollSet || got.maxWaitSet || !got.agentFlags.noStream || got.async {
		t.Errorf("flags: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdSend(f, run), "--url", "https://agents.example.com/r", "-", "--task", "t-1"); err != nil || got == nil ||
		got.agent != "" || len(got.args) != 1 || got.args[0] != "-" || got.taskID != "t-1" || got.agentFlags.url != "https://agents.example.com/r" ||
		got.timeout != config.DefaultSendTimeout || got.timeoutSet || got.maxWait != config.DefaultMaxWait {
		t.Errorf("--url: %v, %+v", err, got)
	}
	for _, args := range [][]string{nil, {"agent", "two", "words"}, {"--url", "https://a.example.com", "text", "more"}} {
		got = nil
		if err := parse(newCmdSend(f, run), args...); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%q: %v, ran %v", args, err, got != nil)
		}
	}
}

// send-async takes send's flags but the waits of a send in the
// foreground (--timeout, --progress, --max-chars).
func TestSendAsyncFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *sendOptions
	run := func(_ context.Context, o *sendOptions) error { got = o; return nil }
	if err := parse(newCmdSendAsync(f, run), "audit-agent", "--max-wait", "2h", "--data", "@q.json"); err != nil || got == nil ||
		!got.async || got.agent != "audit-agent" || len(got.args) != 0 || got.maxWait != 2*time.Hour || !got.maxWaitSet || got.data[0] != "@q.json" {
		t.Errorf("flags: %v, %+v", err, got)
	}
	for _, args := range [][]string{{"a", "--timeout", "1s"}, {"a", "--progress"}, {"a", "--max-chars", "3"}, nil} {
		got = nil
		if err := parse(newCmdSendAsync(f, run), args...); err == nil || got != nil {
			t.Errorf("%q: %v, ran %v", args, err, got != nil)
		}
	}
}

// send's run refuses what its options make wrong before it reads any
// setting: a contextId that is not one, a negative --max-chars.
func TestSendRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	for _, o := range []*sendOptions{{contextID: "../x"}, {maxChars: -1}, {taskID: strings.Repeat("t", 300)}} {
		opts := newSendOptions(f, false)
		opts.contextID, opts.maxChars, opts.taskID = o.contextID, o.maxChars, o.taskID
		if err := sendRun(context.Background(), opts); classify(err).exit != ExitUsage {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// The worker's flags reach its options; it takes no argument.
func TestWorkerFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *workerOptions
	run := func(_ context.Context, o *workerOptions) error { got = o; return nil }
	if err := parse(newCmdWorker(f, run), "--state-dir", "/s", "--identity", "id-1", "--linger", "5s", "--rescan", "2s", "--"+courier.CredentialFlag, "7"); err != nil || got == nil ||
		got.stateDir != "/s" || got.identity != "id-1" || got.linger != 5*time.Second || got.rescan != 2*time.Second || got.credential != 7 || got.probe != "" {
		t.Errorf("flags: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdWorker(f, run)); err != nil || got == nil || got.linger != 2*time.Second || got.rescan != time.Second || got.credential != courier.DefaultCredentialHandle {
		t.Errorf("defaults: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdWorker(f, run), "extra"); classify(err).exit != ExitUsage || got != nil {
		t.Errorf("an argument: %v, ran %v", err, got != nil)
	}
}

// A worker without its state directory, identity or credential is
// refused (exit 2), and a probe without a token: nothing is served.
func TestWorkerRunRefusesWithoutItsFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	for _, o := range []workerOptions{{}, {stateDir: t.TempDir()}, {stateDir: t.TempDir(), identity: "id-1", credential: 0}, {probe: "not-a-token"}} {
		opts := o
		opts.Process = f.Process
		if err := workerRun(context.Background(), &opts); classify(err).exit != ExitUsage {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// result takes one or more contextIds, and tells a --timeout given from
// none.
func TestResultFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *resultOptions
	run := func(_ context.Context, o *resultOptions) error { got = o; return nil }
	if err := parse(newCmdResult(f, run), "c1", "c2", "--wait", "--any", "--progress", "--timeout", "5s", "--max-chars", "3"); err != nil || got == nil ||
		len(got.contextIDs) != 2 || got.contextIDs[1] != "c2" || !got.wait || !got.any || !got.progress || got.timeout != 5*time.Second || !got.timeoutSet || got.maxChars != 3 {
		t.Errorf("flags: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdResult(f, run), "c1"); err != nil || got == nil || got.wait || got.timeoutSet || got.timeout != config.DefaultWaitTimeout {
		t.Errorf("defaults: %v, %+v", err, got)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = "c"
	}
	for _, args := range [][]string{nil, many} {
		got = nil
		if err := parse(newCmdResult(f, run), args...); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%d arguments: %v, ran %v", len(args), err, got != nil)
		}
	}
}

// result's run refuses a negative --max-chars before it opens the state
// directory, and a contextId that is not one.
func TestResultRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	opts := &resultOptions{Printer: f.Printer, Engine: f.Engine, contextIDs: []string{"c1"}, maxChars: -1}
	if err := resultRun(context.Background(), opts); classify(err).exit != ExitUsage {
		t.Errorf("--max-chars -1: %v", err)
	}
	opts = &resultOptions{Printer: f.Printer, contextIDs: []string{"../x"},
		Engine: func() (*courier.Courier, error) { return newEngine(f.Process, engineParts{}), nil }}
	if err := resultRun(context.Background(), opts); classify(err).exit != ExitUsage {
		t.Errorf("a bad contextId: %v", err)
	}
}

// fetch takes a contextId and at most a peer, or --task and at most a
// peer, with its flags; a peer and --url together, or nothing, are
// refused.
func TestFetchFlags(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	var got *fetchOptions
	run := func(_ context.Context, o *fetchOptions) error { got = o; return nil }
	if err := parse(newCmdFetch(f, run), "c1", "research", "--timeout", "9s", "--max-chars", "40", "--protocol", "1.0", "--binding", "rest",
		"--state", "completed", "--out", "d"); err != nil || got == nil || got.contextID != "c1" || got.peer != "research" || got.timeout != 9*time.Second ||
		got.maxChars != 40 || got.agentFlags.protocol != "1.0" || got.agentFlags.binding != "rest" || got.state != "completed" || got.out != "d" {
		t.Errorf("flags: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdFetch(f, run), "--task", "t-1", "--url", "https://agents.example.com/r"); err != nil || got == nil ||
		got.taskID != "t-1" || got.contextID != "" || got.peer != "" || got.agentFlags.url != "https://agents.example.com/r" || got.timeout != defaultReadTimeout {
		t.Errorf("--task: %v, %+v", err, got)
	}
	got = nil
	if err := parse(newCmdFetch(f, run), "--task", "t-1", "research"); err != nil || got == nil || got.taskID != "t-1" || got.peer != "research" {
		t.Errorf("--task and a peer: %v, %+v", err, got)
	}
	for _, args := range [][]string{nil, {"--task", "t", "a", "b"}, {"c1", "research", "--url", "https://a.example.com"}, {"a", "b", "c"}} {
		got = nil
		if err := parse(newCmdFetch(f, run), args...); classify(err).exit != ExitUsage || got != nil {
			t.Errorf("%q: %v, ran %v", args, err, got != nil)
		}
	}
}

// fetch's run refuses what its options make wrong before it asks any
// server: a negative --max-chars, a protocol no agent speaks, a bad
// contextId, --state without an A2A agent.
func TestFetchRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	f, _, _ := unitFactory(false)
	for _, o := range []fetchOptions{{contextID: "c1", maxChars: -1}, {contextID: "c1", agentFlags: agentFlags{protocol: "2.0"}}, {contextID: "../x"},
		{contextID: "3f6c2e1a-5b7d-4c8e-9f01-23456789abcd", state: "completed"}, {taskID: strings.Repeat("t", 300)}} {
		opts := o
		opts.Printer, opts.Store = f.Printer, f.Store
		if err := fetchRun(context.Background(), &opts); classify(err).exit != ExitUsage {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
