package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/a2a-courier/a2a-courier/client/agentbuildertest"
	"github.com/a2a-courier/a2a-courier/internal/buildinfo"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/doctor"
	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
	"github.com/a2a-courier/a2a-courier/skill"
)

type configShowDoc struct {
	Profile          string                `json:"profile"`
	ConfigFile       string                `json:"config_file"`
	ConfigFileExists bool                  `json:"config_file_exists"`
	Settings         map[string]settingDoc `json:"settings"`
}

func (h *harness) configShow(t *testing.T, args ...string) configShowDoc {
	t.Helper()
	r := h.run(append([]string{"config", "show", "--json"}, args...)...)
	r.expect(t, ExitOK)
	var d configShowDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err, r.stdout)
	}
	return d
}

func writeConfig(t *testing.T, h *harness, body string, mode os.FileMode) string {
	t.Helper()
	delete(h.env, "A2A_COURIER_MAX_WAIT") // these tests look at every layer
	dir := t.TempDir()
	h.env["A2A_COURIER_CONFIG_DIR"] = dir
	path := filepath.Join(dir, "config.yaml")
	if mode == 0o600 {
		// private as a2a-courier makes it, on every system
		if err := writePrivate(path, []byte(body)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode)
	return path
}

const twoProfiles = `
default_profile: prod
profiles:
  prod:
    kibana_url: https://prod.example.com
    space: security
    poll_interval: 30s
  lab:
    kibana_url: http://localhost:5601
    max_wait: 10m
`

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
		delete(h.env, "A2A_COURIER_MAX_WAIT")
		d := h.configShow(t)
		if d.Profile != "default" || d.Settings["kibana_url"].Source != "default" || d.Settings["poll_interval"] != (settingDoc{"20s", "default"}) ||
			d.Settings["api_key"].Value != "not set" || d.ConfigFile != filepath.Join(h.env["A2A_COURIER_CONFIG_DIR"], "config.yaml") || d.ConfigFileExists {
			t.Errorf("%+v", d)
		}
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		writeConfig(t, h, twoProfiles, 0o600)
		d := h.configShow(t)
		if d.Profile != "prod" || !d.ConfigFileExists || d.Settings["kibana_url"] != (settingDoc{"https://prod.example.com", "file (profile prod)"}) ||
			d.Settings["space"].Value != "security" || d.Settings["poll_interval"].Value != "30s" || d.Settings["max_wait"].Source != "default" {
			t.Errorf("%+v", d)
		}
	})
	t.Run("env over file", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		writeConfig(t, h, twoProfiles, 0o600)
		h.env["KIBANA_URL"] = "https://env.example.com"
		h.env["A2A_COURIER_POLL_INTERVAL"] = "5s"
		h.env["KIBANA_SPACE_ID"] = "ops"
		d := h.configShow(t)
		if d.Settings["kibana_url"] != (settingDoc{"https://env.example.com", "env KIBANA_URL"}) || d.Settings["poll_interval"] != (settingDoc{"5s", "env A2A_COURIER_POLL_INTERVAL"}) ||
			d.Settings["space"] != (settingDoc{"ops", "env KIBANA_SPACE_ID"}) {
			t.Errorf("%+v", d)
		}
	})
	t.Run("flag over env", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		writeConfig(t, h, twoProfiles, 0o600)
		h.env["KIBANA_URL"] = "https://env.example.com"
		d := h.configShow(t, "--kibana-url", "https://flag.example.com", "--space", "flagspace")
		if d.Settings["kibana_url"] != (settingDoc{"https://flag.example.com", "flag --kibana-url"}) || d.Settings["space"].Source != "flag --space" {
			t.Errorf("%+v", d)
		}
	})
	t.Run("profile selection", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		writeConfig(t, h, twoProfiles, 0o600)
		if d := h.configShow(t); d.Profile != "prod" {
			t.Errorf("default_profile: %s", d.Profile)
		}
		h.env["A2A_COURIER_PROFILE"] = "lab"
		if d := h.configShow(t); d.Profile != "lab" || d.Settings["max_wait"].Value != "10m0s" || d.Settings["kibana_url"].Value != "http://localhost:5601" {
			t.Errorf("env profile: %+v", d)
		}
		if d := h.configShow(t, "--profile", "prod"); d.Profile != "prod" || d.Settings["kibana_url"].Value != "https://prod.example.com" {
			t.Errorf("flag profile: %+v", d)
		}
		r := h.run("config", "show", "--profile", "nope")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, `no profile "nope"`) || !strings.Contains(r.stderr, "lab, prod") {
			t.Errorf("stderr %q", r.stderr)
		}
	})
	t.Run("key file", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		keyFile := filepath.Join(t.TempDir(), "prod.key")
		writePrivate(keyFile, []byte(testKey+"\n"))
		writeConfig(t, h, "profiles:\n  default:\n    kibana_url: https://x.example.com\n    api_key_file: "+keyFile+"\n", 0o644)
		d := h.configShow(t)
		if !strings.HasPrefix(d.Settings["api_key"].Value, "set (identity ") || d.Settings["api_key"].Source != "file (profile default) api_key_file" {
			t.Errorf("%+v", d.Settings["api_key"])
		}
		// The text names the source in one pair of parentheses.
		r := h.run("config", "show")
		r.expect(t, ExitOK)
		if !strings.Contains(r.stdout, "https://x.example.com (file, profile default)\n") || strings.Contains(r.stdout, "((") || strings.Contains(r.stdout, "))") {
			t.Errorf("config show:\n%s", r.stdout)
		}
		ownfiletest.Expose(keyFile)
		r = h.run("discover")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, privacyFix(t, keyFile)) {
			t.Errorf("stderr %q", r.stderr)
		}
	})
	t.Run("unknown key in the file", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		writeConfig(t, h, "profiles:\n  default:\n    kibana_ulr: https://x\n", 0o600)
		r := h.run("discover")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stderr, "kibana_ulr") {
			t.Errorf("stderr %q", r.stderr)
		}
	})
}

func TestConfigFileWithKeyMustBePrivate(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, nil)
	path := writeConfig(t, h, "profiles:\n  default:\n    kibana_url: "+sim.URL+"\n    api_key: "+testKey+"\n", 0o644)
	r := h.run("discover")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "holds an API key") || !strings.Contains(r.stderr, "hint: run: "+privacyFix(t, path)) || strings.Contains(r.stderr, testKey) {
		t.Errorf("stderr %q", r.stderr)
	}
	ownfiletest.Protect(path)
	r = h.run("discover")
	r.expect(t, ExitOK)
}

// TestNoFlagTakesTheKey walks every command: no flag may carry a credential.
func TestNoFlagTakesTheKey(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`(?i)(^|-)(api-?key|key|token|password|secret|credential)s?$`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if bad.MatchString(f.Name) {
				t.Errorf("%s has a flag --%s that would carry a secret", c.CommandPath(), f.Name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(RootCommand())
	h := newHarness(t, nil)
	h.run("discover", "--api-key", testKey).expect(t, ExitUsage)
	r := h.run("config", "set", "api-key", testKey)
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, "never an argument") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestConfigSetAndUnset(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, nil)
	dir := filepath.Join(t.TempDir(), "cfg")
	h.env["A2A_COURIER_CONFIG_DIR"] = dir
	h.run("config", "set", "kibana-url", sim.URL+"/", "--profile", "lab").expect(t, ExitOK)
	h.stdin = testKey + "\n"
	r := h.run("config", "set", "api-key", "--profile", "lab")
	r.expect(t, ExitOK)
	if strings.Contains(r.stderr, testKey) || !strings.Contains(r.stderr, "(hidden)") {
		t.Errorf("stderr %q", r.stderr)
	}
	h.stdin = ""
	h.run("config", "set", "poll-interval", "45s", "--profile", "lab").expect(t, ExitOK)
	h.run("config", "set", "default-profile", "lab").expect(t, ExitOK)
	for _, bad := range [][]string{{"poll-interval", "soon"}, {"kibana-url", "ftp://x"}, {"space", "Not A Space"}, {"colour", "red"}} {
		h.run(append([]string{"config", "set"}, bad...)...).expect(t, ExitUsage)
	}
	if p := ownfiletest.FileProblem(filepath.Join(dir, "config.yaml")); p != "" {
		t.Fatalf("config file: %s", p)
	}
	if p := ownfiletest.DirProblem(dir); p != "" {
		t.Errorf("config dir: %s", p)
	}
	d := h.configShow(t)
	if d.Profile != "lab" || d.Settings["kibana_url"].Value != sim.URL || d.Settings["poll_interval"].Value != "45s" {
		t.Errorf("%+v", d)
	}
	h.run("discover").expect(t, ExitOK)
	h.run("config", "unset", "poll-interval").expect(t, ExitOK)
	if d := h.configShow(t); d.Settings["poll_interval"] != (settingDoc{"20s", "default"}) {
		t.Errorf("after unset: %+v", d.Settings["poll_interval"])
	}
	r = h.run("config", "path")
	r.expect(t, ExitOK)
	if r.stdout != filepath.Join(dir, "config.yaml")+"\n" {
		t.Errorf("path %q", r.stdout)
	}
	r = h.run("config", "path", "--json")
	r.expect(t, ExitOK)
	if want := fmt.Sprintf("{\n  \"config_file\": %q,\n  \"config_file_exists\": true\n}\n", filepath.Join(dir, "config.yaml")); r.stdout != want {
		t.Errorf("path --json %q, want %q", r.stdout, want)
	}
}

// Without a config file, config show's text says so beside the path; its
// JSON keeps the path a path and says it in config_file_exists.
func TestConfigShowWithoutAFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	dir := t.TempDir()
	h.env["A2A_COURIER_CONFIG_DIR"] = dir
	path := filepath.Join(dir, "config.yaml")
	r := h.run("config", "show")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, "config_file    "+path+" (not present)\n") {
		t.Errorf("text: %q", r.stdout)
	}
	if d := h.configShow(t); d.ConfigFile != path || d.ConfigFileExists {
		t.Errorf("json: %+v", d)
	}
	r = h.run("config", "path", "--json")
	if want := fmt.Sprintf("{\n  \"config_file\": %q,\n  \"config_file_exists\": false\n}\n", path); r.stdout != want {
		t.Errorf("path --json %q, want %q", r.stdout, want)
	}
}

func TestConfigShowGolden(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := writeConfig(t, h, twoProfiles, 0o600)
	h.env["KIBANA_API_KEY"] = testKey
	r := h.run("config", "show")
	r.expect(t, ExitOK)
	out := strings.ReplaceAll(r.stdout, path, "$CONFIG")
	out = strings.ReplaceAll(out, h.env["A2A_COURIER_STATE_DIR"], "$STATE")
	golden(t, "config-show", out)
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	normalize := func(s string, sim *agentbuildertest.Server, h *harness) string {
		s = strings.ReplaceAll(s, sim.URL, "$KIBANA")
		s = strings.ReplaceAll(s, h.env["A2A_COURIER_STATE_DIR"], "$STATE")
		s = strings.ReplaceAll(s, h.env["A2A_COURIER_CONFIG_DIR"], "$CONFIG")
		// Windows' terms: a path's separator, the state directory's ACL
		s = strings.ReplaceAll(strings.ReplaceAll(s, `$CONFIG\`, "$CONFIG/"), "(owner-only ACL,", "(0700,")
		return regexp.MustCompile(`in [0-9.]+[µm]?s`).ReplaceAllString(s, "in T")
	}
	t.Run("all pass", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, nil)
		h := newHarness(t, sim)
		h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
		r := h.run("doctor")
		r.expect(t, ExitOK)
		golden(t, "doctor-pass", normalize(r.stdout, sim, h))
	})
	t.Run("key refused", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, nil)
		h := newHarness(t, sim)
		h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
		h.env["KIBANA_API_KEY"] = "d3Jvbmc6a2V5"
		r := h.run("doctor")
		r.expect(t, ExitAuth)
		golden(t, "doctor-401", normalize(r.stdout, sim, h))
	})
	t.Run("agent builder disabled", func(t *testing.T) {
		t.Parallel()
		sim := startSim(t, func(o *agentbuildertest.Options) { o.AgentBuilderDisabled = true })
		h := newHarness(t, sim)
		r := h.run("doctor", "--json")
		r.expect(t, ExitNotFound)
		var doc struct {
			OK     bool           `json:"ok"`
			Checks []doctor.Check `json:"checks"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		status := map[string]string{}
		for _, c := range doc.Checks {
			status[c.Name] = c.Status
		}
		if doc.OK || status["Agent Builder enabled"] != "fail" || status["API key accepted"] != "pass" || status["agent cards"] != "skip" || status["background worker"] != "pass" {
			t.Errorf("%+v", doc)
		}
	})
	t.Run("not configured", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.env["A2A_COURIER_CONFIG_DIR"] = t.TempDir()
		r := h.run("doctor")
		r.expect(t, ExitUsage)
		if !strings.Contains(r.stdout, "✗ configuration") || !strings.Contains(r.stdout, "- Kibana reachable") || !strings.Contains(r.stdout, "✓ background worker") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	})
}

func TestSetupJSONForm(t *testing.T) {
	t.Parallel()
	r := newHarness(t, nil).run("discover", "--json")
	r.expect(t, ExitUsage)
	var doc struct {
		Error errorDoc `json:"error"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	if doc.Error.Code != "not_configured" || len(doc.Error.Setup) != 3 || !strings.Contains(doc.Error.Setup[0], "feature_agentBuilder.read") {
		t.Errorf("%+v", doc.Error)
	}
}

func TestSkillInstallCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	home := h.env["HOME"]
	if runtime.GOOS == "windows" {
		home = h.env["USERPROFILE"]
	}
	r := h.run("skill", "install", "--target", "claude", "--json")
	r.expect(t, ExitOK)
	var doc struct {
		Path   string `json:"path"`
		Action string `json:"action"`
		Binary string `json:"binary"`
	}
	json.Unmarshal([]byte(r.stdout), &doc)
	exe, _ := filepath.Abs(os.Args[0])
	if doc.Path != filepath.Join(home, ".claude/skills/a2a-courier/SKILL.md") || doc.Action != "created" || doc.Binary != exe {
		t.Errorf("%+v", doc)
	}
	r = h.run("skill", "install", "--target", "claude")
	r.expect(t, ExitOK)
	if !strings.HasPrefix(r.stdout, "unchanged: ") {
		t.Errorf("second install: %q", r.stdout)
	}
	dir := t.TempDir()
	r = h.run("skill", "install", "--dir", dir, "--dry-run")
	r.expect(t, ExitOK)
	if _, err := os.Stat(filepath.Join(dir, "a2a-courier")); !os.IsNotExist(err) {
		t.Error("dry run wrote files")
	}
	h.run("skill", "install").expect(t, ExitUsage)
	h.run("skill", "install", "--target", "vim").expect(t, ExitUsage)
	r = h.run("skill", "show")
	r.expect(t, ExitOK)
	// The repository's SKILL.md, naming this binary: what was installed.
	root, _ := os.ReadFile("../../SKILL.md")
	installed, _ := os.ReadFile(doc.Path)
	line := ""
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "The binary: ") {
			line = l
		}
	}
	if r.stdout != strings.Replace(string(root), skill.BinaryLine, line, 1) || r.stdout != string(installed) ||
		!strings.HasPrefix(line, "The binary: `"+exe+"`") {
		t.Errorf("skill show is not SKILL.md naming %s as installed:\n%.800s", exe, r.stdout)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := newHarness(t, nil).run("version", "--json")
	r.expect(t, ExitOK)
	var info buildinfo.Info
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || info.Version == "" || !strings.HasPrefix(info.Go, "go") {
		t.Errorf("%+v %v", info, err)
	}
}

// TestEveryCommandAndFlagIsDocumented fails when a command or flag exists
// that SKILL.md or the command reference does not cover.
func TestEveryCommandAndFlagIsDocumented(t *testing.T) {
	t.Parallel()
	skillMD, err := os.ReadFile("../../SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	root := RootCommand()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		file := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		ref, err := os.ReadFile(filepath.Join("../../docs/reference", file))
		if err != nil {
			t.Errorf("%s has no reference page %s", c.CommandPath(), file)
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !strings.Contains(string(ref), "--"+f.Name) {
				t.Errorf("flag --%s of %s is not in its reference page", f.Name, c.CommandPath())
			}
		})
		if c.HasParent() && c.Parent() == root && c.Annotations["skill"] != "omit" && c.Name() != "completion" && !strings.Contains(string(skillMD), "a2a-courier "+c.Name()) {
			t.Errorf("command %s is not in SKILL.md (mention it, or annotate it skill: omit if an assistant never needs it)", c.Name())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// TestConfigSecretInACaseVariantKey: viper folds keys that differ only in
// case and keeps one value, so the permission check reads the YAML itself.
// Found by FuzzReadConfigFile.
func TestConfigSecretInACaseVariantKey(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"profiles:\n  p:\n    api_key: abc\nPROFILES:\n  p:\n    kibana_url: https://x\n",
		"peers:\n  lab:\n    url: https://x\n    token: t0k\nPeers:\n  lab:\n    url: https://y\n",
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		_, err := config.ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), "other users can read it") {
			t.Errorf("%q: got %v, want the file refused", doc, err)
		}
	}
}

// TestConfigDurationsArePositiveWithAUnit: a bare number used to load as
// nanoseconds (poll_interval: 20 polled every 20ns) and a negative
// duration loaded too. Found by FuzzReadConfigFile.
func TestConfigDurationsArePositiveWithAUnit(t *testing.T) {
	t.Parallel()
	for doc, ok := range map[string]bool{
		"profiles:\n  p:\n    poll_interval: 20\n":       false,
		"profiles:\n  p:\n    max_wait: -5m\n":           false,
		"profiles:\n  p:\n    send_timeout: 0s\n":        false,
		"profiles:\n  p:\n    wait_timeout: soon\n":      false,
		"profiles:\n  p:\n    poll_interval: 1h2m3.5s\n": true,
		"profiles:\n  p:\n    poll_interval: ~\n":        true,
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := writePrivate(path, []byte(doc)); err != nil {
			t.Fatal(err)
		}
		_, err := config.ReadFile(path)
		if ok != (err == nil) {
			t.Errorf("%q: got %v", doc, err)
		}
		want := "positive duration with a unit"
		if strings.Contains(doc, ": 20\n") {
			want = "did you mean 20s?" // a bare number gets its unit suggested
		}
		if err != nil && !strings.Contains(classify(err).hint.String(), want) {
			t.Errorf("%q: hint %q", doc, classify(err).hint)
		}
	}
}

// TestKeyGoesWithItsKibana: a key is only ever used with the Kibana it was
// set for. A profile naming its own Kibana and key uses that key over
// KIBANA_API_KEY; a profile's key never goes to KIBANA_URL's other Kibana;
// a profile with a URL and no key takes KIBANA_API_KEY (the common set-up).
func TestKeyGoesWithItsKibana(t *testing.T) {
	t.Parallel()
	const cfg = `
profiles:
  lab:
    kibana_url: https://lab.example.com
    api_key: bGFiOmtleQ==
  urlonly:
    kibana_url: https://urlonly.example.com
`
	for _, tt := range []struct {
		name, profile string
		env           map[string]string
		want          string // api_key source
	}{
		{"profile's own key over the environment's", "lab", map[string]string{"KIBANA_API_KEY": "ZW52OmtleQ=="}, "file (profile lab)"},
		{"profile's key not sent to another Kibana", "lab", map[string]string{"KIBANA_URL": "https://other.example.com"}, "default"},
		{"environment's key and Kibana together", "lab", map[string]string{"KIBANA_URL": "https://other.example.com", "KIBANA_API_KEY": "ZW52OmtleQ=="}, "env KIBANA_API_KEY"},
		{"profile's URL with the environment's key", "urlonly", map[string]string{"KIBANA_API_KEY": "ZW52OmtleQ=="}, "env KIBANA_API_KEY"},
		{"environment's key not sent to --kibana-url's Kibana", "urlonly", map[string]string{"KIBANA_URL": "https://prod.example.com", "KIBANA_API_KEY": "ZW52OmtleQ==", "--kibana-url": "https://other.example.com"}, "default"},
		{"environment's key with --kibana-url and no KIBANA_URL", "urlonly", map[string]string{"KIBANA_API_KEY": "ZW52OmtleQ==", "--kibana-url": "https://other.example.com"}, "env KIBANA_API_KEY"},
		{"environment's key with --kibana-url naming the same Kibana", "urlonly", map[string]string{"KIBANA_URL": "https://prod.example.com", "KIBANA_API_KEY": "ZW52OmtleQ==", "--kibana-url": "https://PROD.example.com/"}, "env KIBANA_API_KEY"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			delete(h.env, "KIBANA_URL")
			delete(h.env, "KIBANA_API_KEY")
			writeConfig(t, h, cfg, 0o600)
			args := []string{"--profile", tt.profile}
			for k, v := range tt.env {
				if strings.HasPrefix(k, "--") {
					args = append(args, k, v)
				} else {
					h.env[k] = v
				}
			}
			d := h.configShow(t, args...)
			if d.Settings["api_key"].Source != tt.want {
				t.Errorf("api_key %+v, want source %q", d.Settings["api_key"], tt.want)
			}
			if tt.want != "default" {
				return
			}
			// A command that needs the key says which key was held back
			// and why, not the generic set-up steps.
			args[0], args[1] = "discover", "--profile="+tt.profile
			r := h.run(append(args, "--json")...)
			r.expect(t, ExitUsage)
			if !strings.Contains(r.stdout, "was not used: it belongs to") || strings.Contains(r.stdout, "Stack Management") {
				t.Errorf("%s", r.stdout)
			}
		})
	}
}

// TestProfileSpaceStaysWithItsKibana: a profile's space is a space of the
// profile's Kibana; another Kibana named in the environment does not get it.
func TestProfileSpaceStaysWithItsKibana(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	writeConfig(t, h, "profiles:\n  lab:\n    kibana_url: https://lab.example.com\n    space: prod\n", 0o600)
	h.env["KIBANA_URL"] = "https://other.example.com"
	d := h.configShow(t, "--profile", "lab")
	if d.Settings["space"].Value != "" && d.Settings["space"].Value != "default" {
		t.Errorf("space %+v follows another Kibana", d.Settings["space"])
	}
	h.env["KIBANA_URL"] = "https://lab.example.com"
	if d := h.configShow(t, "--profile", "lab"); d.Settings["space"].Value != "prod" {
		t.Errorf("space %+v, want the profile's own", d.Settings["space"])
	}
}

// commented is a config file as a person writes it, with comments at the
// top, inline, and inside peers (a section only ever written by hand).
const commented = `# a2a-courier: my deployments
# (kept by hand, edited with config set)

default_profile: prod   # the usual one

profiles:
  # production, read only
  prod:
    kibana_url: https://prod.example.com   # behind the VPN
    space: security
    poll_interval: 30s

  lab:
    kibana_url: "http://localhost:5601"
    max_wait: 10m
`

const commentedPeers = `
# agents outside Kibana
peers:
  research:   # the research team's agent
    url: https://research.example.com/a2a
    token_env: RESEARCH_TOKEN   # exported by direnv
    # no_stream: true
  echo:
    url: http://127.0.0.1:9999
    protocol: "1.0"
# end of file
`

type configEditDoc struct {
	ConfigFile string `json:"config_file"`
	Profile    string `json:"profile"`
	Setting    string `json:"setting"`
	Changed    *bool  `json:"changed"`
}

func (h *harness) configEdit(t *testing.T, args ...string) configEditDoc {
	t.Helper()
	r := h.run(append(append([]string{"config"}, args...), "--json")...)
	r.expect(t, ExitOK)
	var d configEditDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.Changed == nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	return d
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigSetKeepsCommentsAndPeers: config set and unset change the lines
// of the key they name; every other byte of the file, its comments and its
// hand-written peers, stays as it was.
func TestConfigSetKeepsCommentsAndPeers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := writeConfig(t, h, commented+commentedPeers, 0o644)
	want := commented + commentedPeers
	step := func(args []string, old, new string) {
		t.Helper()
		d := h.configEdit(t, args...)
		if !*d.Changed || d.ConfigFile != path {
			t.Errorf("%v: %+v", args, d)
		}
		want = replaceLine(t, want, old, new)
		if got := readFile(t, path); got != want {
			t.Fatalf("after config %s:\n--- got:\n%s\n--- want:\n%s", strings.Join(args, " "), got, want)
		}
	}
	step([]string{"set", "max-wait", "1h"}, "    poll_interval: 30s", "    poll_interval: 30s\n    max_wait: 1h0m0s")
	step([]string{"set", "kibana-url", "https://prod2.example.com"}, "    kibana_url: https://prod.example.com   # behind the VPN", "    kibana_url: https://prod2.example.com   # behind the VPN")
	step([]string{"set", "kibana-url", "http://lab.example.com:5601", "--profile", "lab"}, `    kibana_url: "http://localhost:5601"`, `    kibana_url: "http://lab.example.com:5601"`)
	step([]string{"unset", "poll-interval"}, "    poll_interval: 30s", "")
	step([]string{"set", "non-blocking", "true", "--profile", "lab"}, "    max_wait: 10m", "    max_wait: 10m\n    non_blocking: true")
	step([]string{"set", "space", "ops", "--profile", "staging"}, "    non_blocking: true", "    non_blocking: true\n  staging:\n    space: ops")
	step([]string{"set", "default-profile", "lab"}, "default_profile: prod   # the usual one", "default_profile: lab   # the usual one")
	h.stdin = testKey + "\n"
	step([]string{"set", "api-key", "--profile", "lab"}, "    non_blocking: true", "    non_blocking: true\n    api_key: "+testKey)
	h.stdin = ""
	step([]string{"unset", "max-wait", "--profile", "lab"}, "    max_wait: 10m", "")

	got := readFile(t, path)
	if !strings.HasSuffix(got, commentedPeers) || !strings.HasPrefix(got, "# a2a-courier: my deployments\n# (kept by hand, edited with config set)\n\n") {
		t.Errorf("the top comment or the peers section changed:\n%s", got)
	}
	if p := ownfiletest.FileProblem(path); p != "" {
		t.Errorf("a file that holds a key is written private: %s", p)
	}
	d := h.configShow(t)
	if d.Profile != "lab" || d.Settings["kibana_url"].Value != "http://lab.example.com:5601" || d.Settings["non_blocking"].Value != "true" ||
		d.Settings["max_wait"].Source != "default" || !strings.HasPrefix(d.Settings["api_key"].Value, "set (identity ") {
		t.Errorf("%+v", d)
	}
	if d := h.configShow(t, "--profile", "prod"); d.Settings["kibana_url"].Value != "https://prod2.example.com" || d.Settings["max_wait"].Value != "1h0m0s" ||
		d.Settings["poll_interval"].Source != "default" || d.Settings["space"].Value != "security" {
		t.Errorf("%+v", d)
	}
	cf, err := config.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := cf.Peers["research"]; p.URL != "https://research.example.com/a2a" || p.TokenEnv != "RESEARCH_TOKEN" || cf.Peers["echo"].Protocol != "1.0" {
		t.Errorf("peers %+v", cf.Peers)
	}

	// The same value again changes nothing, and the file is not written.
	before, _ := os.Stat(path)
	if d := h.configEdit(t, "set", "space", "ops", "--profile", "staging"); *d.Changed {
		t.Errorf("same value: %+v", d)
	}
	r := h.run("config", "set", "default-profile", "lab")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "already lab") || !strings.Contains(r.stderr, "nothing changed") {
		t.Errorf("stderr %q", r.stderr)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) || readFile(t, path) != got {
		t.Error("an edit that changes nothing rewrote the file")
	}
}

// TestConfigUnsetUnknownProfile: naming a profile that does not exist is a
// configuration error (exit 2) that lists the profiles, as for every other
// command; it never reports success.
func TestConfigUnsetUnknownProfile(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := writeConfig(t, h, twoProfiles, 0o600)
	r := h.run("config", "unset", "api-key", "--profile", "nosuch", "--json")
	r.expect(t, ExitUsage)
	var doc struct {
		Error errorDoc `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err, r.stdout)
	}
	if doc.Error.Code != "config" || !strings.Contains(doc.Error.Message, `no profile "nosuch"`) || doc.Error.Hint != "profiles in "+path+": lab, prod" {
		t.Errorf("%+v", doc.Error)
	}
	r = h.run("config", "unset", "space", "--profile", "NoSuch")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, `no profile "nosuch"`) || !strings.Contains(r.stderr, "hint: profiles in "+path+": lab, prod") {
		t.Errorf("stderr %q", r.stderr)
	}
	h.env["A2A_COURIER_PROFILE"] = "nosuch"
	h.run("config", "unset", "space").expect(t, ExitUsage)
	delete(h.env, "A2A_COURIER_PROFILE")
	// default_profile names a profile the file does not have.
	writeConfig(t, h, "default_profile: gone\n"+twoProfiles[strings.Index(twoProfiles, "profiles:"):], 0o600)
	h.run("config", "unset", "space").expect(t, ExitUsage)
	if got := readFile(t, path); got != twoProfiles {
		t.Errorf("the file changed:\n%s", got)
	}

	// No config file at all: the same error, and no file is created.
	h.env["A2A_COURIER_CONFIG_DIR"] = filepath.Join(t.TempDir(), "none")
	r = h.run("config", "unset", "api-key", "--profile", "nosuch")
	r.expect(t, ExitUsage)
	if !strings.Contains(r.stderr, `no profile "nosuch"`) || !strings.Contains(r.stderr, ": none") {
		t.Errorf("stderr %q", r.stderr)
	}
	if _, err := os.Stat(h.env["A2A_COURIER_CONFIG_DIR"]); !os.IsNotExist(err) {
		t.Errorf("unset created the config directory: %v", err)
	}
}

// TestConfigUnsetNotSet: removing a value that is not there says so, in
// words and with changed:false, and leaves the file alone.
func TestConfigUnsetNotSet(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := writeConfig(t, h, commented+commentedPeers, 0o600)
	before, _ := os.Stat(path)
	r := h.run("config", "unset", "send-timeout", "--profile", "lab")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "send-timeout was not set in profile lab") || strings.Contains(r.stderr, "removed") {
		t.Errorf("stderr %q", r.stderr)
	}
	if d := h.configEdit(t, "unset", "send-timeout", "--profile", "lab"); *d.Changed || d.Profile != "lab" || d.Setting != "send-timeout" {
		t.Errorf("%+v", d)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) || readFile(t, path) != commented+commentedPeers {
		t.Error("an unset that removes nothing rewrote the file")
	}
	h.run("config", "unset", "default-profile").expect(t, ExitOK)
	r = h.run("config", "unset", "default-profile")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stderr, "default-profile was not set") {
		t.Errorf("stderr %q", r.stderr)
	}
	// With no default_profile, the implicit profile "default" need not
	// exist: nothing is set in it.
	if d := h.configEdit(t, "unset", "space"); *d.Changed || d.Profile != "default" {
		t.Errorf("%+v", d)
	}
	if got := readFile(t, path); got != replaceLine(t, commented, "default_profile: prod   # the usual one", "")+commentedPeers {
		t.Errorf("file:\n%s", got)
	}
	r = h.run("config", "unset", "max-wait", "--profile", "lab", "--json")
	r.expect(t, ExitOK)
	if !strings.Contains(r.stdout, `"changed":true`) && !strings.Contains(r.stdout, `"changed": true`) {
		t.Errorf("stdout %q", r.stdout)
	}

	// No file: nothing to remove, nothing written.
	h.env["A2A_COURIER_CONFIG_DIR"] = filepath.Join(t.TempDir(), "none")
	if d := h.configEdit(t, "unset", "space"); *d.Changed {
		t.Errorf("%+v", d)
	}
	if _, err := os.Stat(h.env["A2A_COURIER_CONFIG_DIR"]); !os.IsNotExist(err) {
		t.Errorf("unset created the config directory: %v", err)
	}
}

// TestConfigEditInvalidYAML: a file that is not YAML gives one line and a
// hint, exit 2, and is never overwritten.
func TestConfigEditInvalidYAML(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"# mine\nprofiles:\n  prod: [\n    kibana_url: x\n",
		"profiles:\n  prod:\n    space: a\n    space: b\n",
		"- just\n- a list\n",
	} {
		h := newHarness(t, nil)
		path := writeConfig(t, h, body, 0o600)
		for _, args := range [][]string{{"set", "max-wait", "1h"}, {"unset", "space"}, {"set", "default-profile", "x"}} {
			r := h.run(append([]string{"config"}, args...)...)
			r.expect(t, ExitUsage)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "a2a-courier: config file "+path) || !strings.HasPrefix(lines[1], "hint: fix ") ||
				!strings.Contains(lines[1], "left as it is") {
				t.Errorf("%q, %v: stderr %q", body, args, r.stderr)
			}
			if body[0] != '-' && !strings.Contains(lines[0], "is not valid YAML: yaml: ") {
				t.Errorf("%q: %q", body, lines[0])
			}
			r = h.run(append([]string{"config", "--json"}, args...)...)
			r.expect(t, ExitUsage)
			if !strings.Contains(r.stdout, `"code":"config"`) && !strings.Contains(r.stdout, `"code": "config"`) {
				t.Errorf("json %q", r.stdout)
			}
			if got := readFile(t, path); got != body {
				t.Errorf("the file was written:\n%s", got)
			}
		}
	}
}

// replaceLine replaces the one line old of doc with new (none for "").
func replaceLine(t *testing.T, doc, old, new string) string {
	t.Helper()
	if strings.Count(doc, old+"\n") != 1 {
		t.Fatalf("line %q is not once in the document", old)
	}
	if new == "" {
		return strings.Replace(doc, old+"\n", "", 1)
	}
	return strings.Replace(doc, old+"\n", new+"\n", 1)
}

// The commands a task's output prints run against the server the caller's
// command line chose: with --profile, the answer, the resume and the
// hints carry it, and run as printed.
func TestPrintedCommandsKeepTheProfile(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, nil)
	writeConfig(t, h, "profiles:\n  p3:\n    kibana_url: "+sim.URL+"\n    api_key: "+testKey+"\n", 0o600)

	r := h.run("--profile", "p3", "send", "asks", "clean up", "--json")
	r.expect(t, ExitInputRequired)
	d := decodeTask(t, r.stdout)
	if !strings.HasPrefix(d.Answer, "a2a-courier send --profile p3 asks --context "+d.ContextID) {
		t.Fatalf("answer %q", d.Answer)
	}
	h.runAnswer(t, d.Answer, "yes").expect(t, ExitOK)

	r = h.run("--profile", "p3", "send", "asks", "clean up again")
	r.expect(t, ExitInputRequired)
	if !strings.Contains(r.stderr, "answer with (the answer on stdin): a2a-courier send --profile p3 asks --context ") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = h.run("--profile", "p3", "send", "no-such-agent", "x")
	r.expect(t, ExitNotFound)
	if !strings.Contains(r.stderr, "`a2a-courier discover --profile p3`") {
		t.Errorf("hint %q", r.stderr)
	}
	r = h.run("--profile", "p3", "send", "no-such-agent", "x", "--json")
	if !strings.Contains(r.stdout, "`a2a-courier discover --profile p3`") {
		t.Errorf("json hint %q", r.stdout)
	}
	// Without the flag (the profile from the environment) nothing is added.
	h.env["A2A_COURIER_PROFILE"] = "p3"
	r = h.run("send", "asks", "once more", "--json")
	r.expect(t, ExitInputRequired)
	if d := decodeTask(t, r.stdout); !strings.HasPrefix(d.Answer, "a2a-courier send asks --context ") {
		t.Errorf("answer %q", d.Answer)
	}
}

// A hint about a setting names where the value came from: a key refused
// that a profile holds points at the profile, not at KIBANA_API_KEY, which
// is not set; a key from the environment keeps its variable.
func TestHintsNameTheSettingsSource(t *testing.T) {
	t.Parallel()
	sim := startSim(t, nil)
	h := newHarness(t, nil)
	writeConfig(t, h, "profiles:\n  badkey:\n    kibana_url: "+sim.URL+"\n    api_key: YmFkOmtleQ==\n", 0o600)
	r := h.run("--profile", "badkey", "discover")
	r.expect(t, ExitAuth)
	if !strings.Contains(r.stderr, "check the api_key of profile badkey in the config file (a2a-courier config set api-key --profile badkey)") || strings.Contains(r.stderr, "KIBANA_API_KEY") {
		t.Errorf("stderr %q", r.stderr)
	}
	h.env["KIBANA_URL"], h.env["KIBANA_API_KEY"] = sim.URL, "YmFkOmtleQ=="
	delete(h.env, "A2A_COURIER_CONFIG_DIR")
	r = h.run("discover", "--json")
	r.expect(t, ExitAuth)
	if !strings.Contains(r.stdout, "check KIBANA_API_KEY") {
		t.Errorf("stdout %q", r.stdout)
	}
}
