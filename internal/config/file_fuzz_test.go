package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/internal/ownfile/ownfiletest"
)

// yamlSecrets reports whether a YAML document holds a credential anywhere:
// a key spelled api_key or token, in any case, whose value is a scalar
// with text. It reads the file as text would be read by someone else,
// whatever the config's own decoding makes of it.
func yamlSecrets(doc []byte) bool {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return false // no config can load from it either
	}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		if n.Kind == yaml.AliasNode {
			return walk(n.Alias)
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				for v.Kind == yaml.AliasNode && v.Alias != nil {
					v = v.Alias
				}
				key := strings.ToLower(k.Value)
				if (key == "api_key" || key == "token") && v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Value != "" {
					return true
				}
			}
		}
		for _, c := range n.Content {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(&root)
}

// yamlDurations returns the scalars written for the duration keys of each
// profile, by lower-cased profile name and key.
func yamlDurations(doc []byte) map[[2]string]*yaml.Node {
	out := map[[2]string]*yaml.Node{}
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return out
	}
	deref := func(n *yaml.Node) *yaml.Node {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		return n
	}
	top := deref(root.Content[0])
	if top == nil || top.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if strings.ToLower(top.Content[i].Value) != "profiles" {
			continue
		}
		profiles := deref(top.Content[i+1])
		if profiles == nil || profiles.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(profiles.Content); j += 2 {
			name := strings.ToLower(profiles.Content[j].Value)
			p := deref(profiles.Content[j+1])
			if p == nil || p.Kind != yaml.MappingNode {
				continue
			}
			for k := 0; k+1 < len(p.Content); k += 2 {
				switch key := strings.ToLower(p.Content[k].Value); key {
				case "poll_interval", "max_wait", "send_timeout", "wait_timeout":
					out[[2]string{name, key}] = deref(p.Content[k+1])
				}
			}
		}
	}
	return out
}

// FuzzReadConfigFile writes arbitrary YAML as the config file, readable by
// its owner only (0600) or by everyone (0644), and reads it with
// ReadFile. It checks:
//
//   - it never panics;
//   - a failure is a *Error of code config (exit 2), a hint, and a one-line
//     message;
//   - a file others can read that holds an api_key or a token (yamlSecrets,
//     read independently) is always refused;
//   - a config that loads is well formed: profile and peer names in lower
//     case (as they are looked up), every peer with a url, no secret in a
//     file others can read, and every duration either unset or positive,
//     written as a Go duration string that means that duration (never a
//     bare number, which would mean nanoseconds).
func FuzzReadConfigFile(f *testing.F) {
	for _, doc := range []string{
		twoProfiles,
		"default_profile: prod\nprofiles:\n  prod:\n    kibana_url: https://prod.example.com\n    api_key: VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==\n    poll_interval: 30s\n    non_blocking: true\n",
		"profiles:\n  lab:\n    kibana_url: http://localhost:5601\n    api_key_file: ~/.config/a2a-courier/lab.key\n    ca_cert: /etc/ssl/lab.pem\n    insecure: false\n    max_wait: 10m\n    send_timeout: 5m\n    wait_timeout: 1h30m\n",
		"peers:\n  echo:\n    url: http://127.0.0.1:9999\n    protocol: \"1.0\"\n    no_stream: true\n  secure:\n    url: https://agents.example.com/a2a\n    token: s3cr3t-t0k3n\n  envtok:\n    url: https://x\n    token_env: ECHO_TOKEN\n    token_file: ~/tok\n",
		"profiles:\n  Prod:\n    API_KEY: abc\n",
		"profiles:\n  p:\n    api_key: abc\nPROFILES:\n  p:\n    kibana_url: https://x\n",
		"peers:\n  Lab:\n    URL: https://x\n    Token: 123456\n",
		"profiles:\n  a: &a\n    api_key: k\n  b: *a\n",
		"profiles:\n  p:\n    poll_interval: 20\n",
		"profiles:\n  p:\n    poll_interval: -5s\n    max_wait: 0s\n",
		"profiles:\n  p:\n    poll_interval: 1h2m3.5s\n    wait_timeout: \"  90s \"\n",
		"profiles:\n  - p:\n      api_key: k\n",
		"profiles:\n  a.b:\n    api_key: k\n",
		"peers:\n  nourl:\n    protocol: \"0.3\"\n",
		"unknown: 1\n",
		"profiles: [",
		"\t- : :",
		"",
		"profiles:\n  p:\n    api_key: !!binary aGVsbG8=\n",
		"profiles:\n  p:\n    api_key: ~\n    kibana_url: \"\"\n",
	} {
		f.Add([]byte(doc), false)
		f.Add([]byte(doc), true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc []byte, shared bool) {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		// Others can read it (mode 0644; on Windows an ACL granting
		// Everyone), or not (0600; an owner-only ACL).
		share := ownfiletest.Protect
		if shared {
			share = ownfiletest.Expose
		}
		if err := share(path); err != nil {
			t.Fatal(err)
		}
		cf, err := ReadFile(path)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != "config" || strings.TrimSpace(ce.Hint) == "" {
				t.Fatalf("error %T %v: want a *Error of code config with a hint", err, err)
			}
			if strings.ContainsAny(ce.Message, "\r\n") {
				t.Fatalf("message is not one line: %q", ce.Message)
			}
			return
		}
		if cf == nil {
			t.Fatal("no config and no error for a file that exists")
		}
		if shared && yamlSecrets(doc) {
			t.Fatalf("a file others can read holds a secret, and it loaded:\n%s", doc)
		}
		durs := yamlDurations(doc)
		for name, p := range cf.Profiles {
			if name != strings.ToLower(name) {
				t.Fatalf("profile %q cannot be found: names are looked up in lower case", name)
			}
			if shared && p.APIKey != "" {
				t.Fatalf("profile %s has an API key in a file others can read", name)
			}
			for key, d := range map[string]time.Duration{"poll_interval": p.PollInterval, "max_wait": p.MaxWait, "send_timeout": p.SendTimeout, "wait_timeout": p.WaitTimeout} {
				if d < 0 {
					t.Fatalf("profile %s: %s is %v", name, key, d)
				}
				if d == 0 {
					continue
				}
				n := durs[[2]string{name, key}]
				if n == nil || n.Kind != yaml.ScalarNode {
					t.Fatalf("profile %s: %s is %v, written as %v", name, key, d, n)
				}
				if w, err := time.ParseDuration(strings.TrimSpace(n.Value)); err != nil || w != d {
					t.Fatalf("profile %s: %s is %v, written as %q (%v)", name, key, d, n.Value, err)
				}
			}
		}
		for name, p := range cf.Peers {
			if name != strings.ToLower(name) {
				t.Fatalf("peer %q cannot be found: names are looked up in lower case", name)
			}
			if p.URL == "" {
				t.Fatalf("peer %s loaded without a url", name)
			}
			if shared && p.Token != "" {
				t.Fatalf("peer %s has a token in a file others can read", name)
			}
		}
	})
}
