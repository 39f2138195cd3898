package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
)

// Caps on the files read by path. A real config file is a few KB, a key or
// a token well under one.
const (
	MaxFileBytes       = 1 << 20
	MaxSecretFileBytes = 64 << 10
)

// ReadFile reads the config file with viper, the one place viper is
// used. A missing file is no error. A file that holds an API key or a
// token must be readable by its owner alone.
func ReadFile(path string) (*File, error) {
	raw, fi, err := boundedfile.Read(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, FileError(path, err)
	}
	// A secret in a file others can read (its mode on Unix, its ACL on
	// Windows) is refused; a file without one may be shared.
	if a := ownfile.File(path, fi); a.Open {
		if what, where := secretIn(raw); what != "" {
			return nil, configErr("run: "+a.Hint, "config file %s holds %s (%s) but other users can read it (%s)", path, what, where, a.Detail)
		}
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(raw)); err != nil {
		return nil, configErr("fix the YAML, or move the file away", "config file %s: %s", path, oneLineErr(err))
	}
	cf := &File{}
	var notDuration []string // the values durationHook refused
	hook := func(from, to reflect.Type, data any) (any, error) {
		d, err := durationHook(from, to, data)
		if err != nil {
			notDuration = append(notDuration, fmt.Sprint(data))
		}
		return d, err
	}
	if err := v.UnmarshalExact(cf, viper.DecodeHook(hook)); err != nil {
		hint := "known keys: default_profile, profiles.<name>.{kibana_url, space, api_key, api_key_file, ca_cert, insecure, poll_interval, max_wait, send_timeout, wait_timeout, non_blocking}, peers.<name>.{url, token_env, token_file, token, protocol, binding, no_stream, ca_cert, insecure}"
		if len(notDuration) > 0 && strings.Contains(err.Error(), errNotDuration.Error()) {
			hint = DurationHint(notDuration[0])
		}
		return nil, configErr(hint, "config file %s: %s", path, oneLineErr(err))
	}
	for name, p := range cf.Peers {
		if p.URL == "" {
			return nil, configErr("give each peer its url", "config file %s: peer %s has no url", path, name)
		}
		if _, err := client.ParseBinding(p.Binding); err != nil {
			return nil, configErr("write binding: jsonrpc or binding: rest, or leave it out to let the card decide", "config file %s: peer %s: %v", path, name, err)
		}
	}
	return cf, nil
}

var errNotDuration = errors.New("is not a positive duration")

// durationHook decodes the config file's durations: only a Go duration
// string ("20s"), only a positive one, as config set takes them. Viper's
// own decoding took a bare number as nanoseconds ("poll_interval: 20"
// polled every 20ns) and let negative durations through.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	if s, ok := data.(string); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && d > 0 {
			return d, nil
		}
	}
	return nil, fmt.Errorf("%s %w such as 20s or 5m", oneLine(fmt.Sprintf("%q", fmt.Sprint(data)), 40), errNotDuration)
}

// secretIn says what credential a YAML document keeps and where: a key
// api_key or token, in any case and at any depth, with a value. It reads
// the document itself, not viper's reading of it: viper folds keys that
// differ only in case into one and keeps one of their values, so a secret
// that anyone reading the file sees can be missing from the decoded
// config.
func secretIn(doc []byte) (what, where string) {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return "", "" // viper will not read it either
	}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path []string) bool
	walk = func(n *yaml.Node, path []string) bool {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		for i, c := range n.Content {
			p := path
			switch n.Kind {
			case yaml.MappingNode:
				if i%2 == 0 {
					continue
				}
				key := strings.ToLower(n.Content[i-1].Value)
				p = append(path[:len(path):len(path)], key)
				v := c
				for v != nil && v.Kind == yaml.AliasNode {
					v = v.Alias
				}
				if (key == "api_key" || key == "token") && v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Value != "" {
					switch {
					case len(p) == 3 && p[0] == "profiles" && key == "api_key":
						what, where = "an API key", "profile "+p[1]
					case len(p) == 3 && p[0] == "peers" && key == "token":
						what, where = "a token", "peer "+p[1]
					default:
						what, where = "a credential", strings.Join(p, ".")
					}
					return true
				}
			case yaml.SequenceNode:
				p = append(path[:len(path):len(path)], strconv.Itoa(i))
			}
			if walk(c, p) {
				return true
			}
		}
		return false
	}
	walk(&root, nil)
	return oneLine(what, 40), oneLine(where, 80)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}
