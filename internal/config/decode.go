package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The config file is YAML read as data (yaml.v3 into maps, aliases and
// merge keys resolved), its keys folded to lower case at every level, then
// decoded into File strictly: a key this version does not know is an
// error, and so is a value of the wrong type. Scalars convert as people
// write them: a string from a number or a boolean, a boolean from "true"
// or a number; a duration only from a positive Go duration string.
// (This is what viper, which read the file before, did with these types;
// it is written out here so that the binary does not link viper and its
// dependencies, a third of its start.)

// decodeFile decodes a config document.
func decodeFile(raw []byte) (*File, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("While parsing config: %w", err)
	}
	d := &decoder{}
	cf := &File{}
	d.fields("", fold(doc), map[string]func(string, any){
		"default_profile": func(name string, v any) { cf.DefaultProfile = d.str(name, v) },
		"profiles": func(name string, v any) {
			cf.Profiles = decodeMap(d, name, v, func(name string, m map[string]any) (p Profile) {
				d.fields(name, m, p.fields(d))
				return p
			})
		},
		"peers": func(name string, v any) {
			cf.Peers = decodeMap(d, name, v, func(name string, m map[string]any) (p Peer) {
				d.fields(name, m, p.fields(d))
				return p
			})
		},
	})
	if len(d.errs) > 0 {
		return nil, fmt.Errorf("decoding failed due to the following error(s):\n\n%s", strings.Join(d.errs, "\n"))
	}
	return cf, nil
}

func (p *Profile) fields(d *decoder) map[string]func(string, any) {
	return map[string]func(string, any){
		"kibana_url":    func(n string, v any) { p.KibanaURL = d.str(n, v) },
		"space":         func(n string, v any) { p.Space = d.str(n, v) },
		"api_key":       func(n string, v any) { p.APIKey = d.str(n, v) },
		"api_key_file":  func(n string, v any) { p.APIKeyFile = d.str(n, v) },
		"ca_cert":       func(n string, v any) { p.CACert = d.str(n, v) },
		"insecure":      func(n string, v any) { p.Insecure = d.boolPtr(n, v) },
		"poll_interval": func(n string, v any) { p.PollInterval = d.duration(n, v) },
		"max_wait":      func(n string, v any) { p.MaxWait = d.duration(n, v) },
		"send_timeout":  func(n string, v any) { p.SendTimeout = d.duration(n, v) },
		"wait_timeout":  func(n string, v any) { p.WaitTimeout = d.duration(n, v) },
		"non_blocking":  func(n string, v any) { p.NonBlocking = d.boolPtr(n, v) },
	}
}

func (p *Peer) fields(d *decoder) map[string]func(string, any) {
	return map[string]func(string, any){
		"url":        func(n string, v any) { p.URL = d.str(n, v) },
		"token_env":  func(n string, v any) { p.TokenEnv = d.str(n, v) },
		"token_file": func(n string, v any) { p.TokenFile = d.str(n, v) },
		"token":      func(n string, v any) { p.Token = d.str(n, v) },
		"protocol":   func(n string, v any) { p.Protocol = d.str(n, v) },
		"no_stream":  func(n string, v any) { p.NoStream = d.boolVal(n, v) },
		"ca_cert":    func(n string, v any) { p.CACert = d.str(n, v) },
		"insecure":   func(n string, v any) { p.Insecure = d.boolVal(n, v) },
	}
}

// fold lowers the keys of every mapping, at every depth, and drops the
// keys whose value is null or a mapping left empty (they set nothing). Of
// two keys that fold to one, the one not written in lower case wins.
func fold(v any) map[string]any {
	vals := map[string]any{}
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			vals[k] = x
		}
	case map[any]any:
		for k, x := range m {
			vals[fmt.Sprint(k)] = x
		}
	default:
		return nil
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := keys[i] == strings.ToLower(keys[i]), keys[j] == strings.ToLower(keys[j])
		if li != lj {
			return li
		}
		return keys[i] < keys[j]
	})
	out := map[string]any{}
	for _, k := range keys {
		x := foldValue(vals[k])
		if m, ok := x.(map[string]any); x == nil || ok && len(m) == 0 {
			delete(out, strings.ToLower(k))
			continue
		}
		out[strings.ToLower(k)] = x
	}
	return out
}

func foldValue(v any) any {
	switch x := v.(type) {
	case map[string]any, map[any]any:
		return fold(x)
	case []any:
		for i := range x {
			x[i] = foldValue(x[i])
		}
	}
	return v
}

// decoder collects the errors of one decoding, each naming the value's
// place: profiles[prod].poll_interval.
type decoder struct{ errs []string }

func (d *decoder) fail(format string, args ...any) {
	d.errs = append(d.errs, fmt.Sprintf(format, args...))
}

// fields decodes a mapping's known keys with set and reports the others.
func (d *decoder) fields(name string, m map[string]any, set map[string]func(string, any)) {
	var unknown []string
	for k, v := range m {
		f, ok := set[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		if v != nil {
			f(join(name, k), v)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		d.fail("'%s' has invalid keys: %s", name, strings.Join(unknown, ", "))
	}
}

func join(name, key string) string {
	if name == "" {
		return key
	}
	return name + "." + key
}

// decodeMap decodes a mapping of names (profiles, peers) to mappings.
func decodeMap[T any](d *decoder, name string, v any, each func(string, map[string]any) T) map[string]T {
	m, ok := v.(map[string]any)
	if !ok {
		var zero T
		d.fail("'%s' expected type 'map[string]%T', got unconvertible type '%T'", name, zero, v)
		return nil
	}
	out := make(map[string]T, len(m))
	for k, x := range m {
		entry := fmt.Sprintf("%s[%s]", name, k)
		em, ok := x.(map[string]any)
		if !ok {
			d.fail("'%s' expected a map or struct, got \"%s\"", entry, reflectKind(x))
			continue
		}
		out[k] = each(entry, em)
	}
	return out
}

// str is a string from a scalar: a string, a number or a boolean.
func (d *decoder) str(name string, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []byte:
		return string(x)
	}
	d.fail("'%s' expected type 'string', got unconvertible type '%T'", name, v)
	return ""
}

// boolVal is a boolean from a boolean, a number (not 0) or a string
// strconv.ParseBool reads ("" is false).
func (d *decoder) boolVal(name string, v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case string:
		if x == "" {
			return false
		}
		b, err := strconv.ParseBool(x)
		if err != nil {
			d.fail("'%s' cannot parse value as 'bool': strconv.ParseBool: %v", name, strconv.ErrSyntax)
		}
		return b
	}
	d.fail("'%s' expected type 'bool', got unconvertible type '%T'", name, v)
	return false
}

func (d *decoder) boolPtr(name string, v any) *bool {
	b := d.boolVal(name, v)
	return &b
}

// duration is a positive Go duration string: "poll_interval: 20" is not
// twenty nanoseconds, nor twenty seconds, but a mistake.
func (d *decoder) duration(name string, v any) time.Duration {
	if s, ok := v.(string); ok {
		if dur, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && dur > 0 {
			return dur
		}
	}
	d.fail("'%s' %s %s such as 20s or 5m", name, oneLine(fmt.Sprintf("%q", fmt.Sprint(v)), 40), errNotDuration)
	return 0
}

// reflectKind names the kind of a decoded value, as reflect does.
func reflectKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case int:
		return "int"
	case int64:
		return "int64"
	case uint64:
		return "uint64"
	case float64:
		return "float64"
	case []any:
		return "slice"
	}
	return fmt.Sprintf("%T", v)
}
