// Package mcpinstall writes the entry that starts `a2a-courier mcp` into the
// MCP configuration of an assistant: Claude Desktop, Cursor, VS Code and
// Gemini CLI. It edits the file in place, keeping everything else in it
// (other servers, other settings, comments where the format allows them,
// the order of keys), and it is idempotent: a file that already holds the
// same entry is left as it is. It never writes a secret: the entry names
// the binary, `mcp`, and where the configuration and state live.
package mcpinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/a2a-courier/a2a-courier/internal/boundedfile"
	"github.com/a2a-courier/a2a-courier/internal/ownfile"
	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
	"github.com/a2a-courier/a2a-courier/internal/userdirs"
)

// Target is an assistant whose MCP configuration Install knows.
type Target string

// The targets, as `a2a-courier mcp install --target` names them.
const (
	ClaudeDesktop Target = "claude-desktop"
	Cursor        Target = "cursor"
	VSCode        Target = "vscode"
	Gemini        Target = "gemini"
)

// Targets lists the targets in the order help texts show them.
var Targets = []Target{ClaudeDesktop, Cursor, VSCode, Gemini}

// ParseTarget checks a target name.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets {
		if string(t) == s {
			return t, nil
		}
	}
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = string(t)
	}
	return "", fmt.Errorf("unknown target %q: use %s", s, strings.Join(names, ", "))
}

// Entry is the server entry written: a stdio server started as Command
// with Args, with Env (never a secret).
type Entry struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}

// Path returns the file an assistant reads its MCP servers from, for the
// user (not a project), on the system dirs describes (docs/windows.md
// gives each path's source):
//
//	                Linux                                  macOS                                              Windows
//	claude-desktop  $XDG_CONFIG_HOME/Claude/claude_desktop_config.json   ~/Library/Application Support/Claude/…  %APPDATA%\Claude\claude_desktop_config.json
//	vscode          $XDG_CONFIG_HOME/Code/User/mcp.json     ~/Library/Application Support/Code/User/mcp.json   %APPDATA%\Code\User\mcp.json
//	cursor          ~/.cursor/mcp.json                      the same                                           %USERPROFILE%\.cursor\mcp.json
//	gemini          ~/.gemini/settings.json                 the same                                           %USERPROFILE%\.gemini\settings.json
//
// ($XDG_CONFIG_HOME defaults to ~/.config.) Gemini CLI reads
// $GEMINI_CLI_HOME/.gemini/settings.json instead when GEMINI_CLI_HOME is
// set. Claude Desktop has no Linux build; the Linux path is the one the
// community builds read.
func Path(t Target, dirs userdirs.Env) (string, error) {
	var base string
	var err error
	var elems []string
	switch t {
	case ClaudeDesktop:
		base, err = dirs.AppConfig()
		elems = []string{"Claude", "claude_desktop_config.json"}
	case VSCode:
		base, err = dirs.AppConfig()
		elems = []string{"Code", "User", "mcp.json"}
	case Cursor:
		base, err = dirs.Home()
		elems = []string{".cursor", "mcp.json"}
	case Gemini:
		if base = dirs.Var("GEMINI_CLI_HOME"); base == "" {
			base, err = dirs.Home()
		}
		elems = []string{".gemini", "settings.json"}
	default:
		return "", fmt.Errorf("unknown target %q", t)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find %s's configuration file: %w", t, err)
	}
	return dirs.Join(append([]string{base}, elems...)...), nil
}

// serversKey is the top-level object that holds the servers: VS Code calls
// it "servers", the others "mcpServers".
func serversKey(t Target) string {
	if t == VSCode {
		return "servers"
	}
	return "mcpServers"
}

// server is an entry as the targets write it, in the order their docs show
// the keys.
type server struct {
	// Type is VS Code's: it wants an explicit "stdio".
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func (e Entry) value(t Target) server {
	v := server{Command: e.Command, Args: e.Args, Env: e.Env}
	if v.Args == nil {
		v.Args = []string{}
	}
	if t == VSCode {
		v.Type = "stdio"
	}
	return v
}

// ErrCannotEdit is wrapped by the errors of a file Plan will not edit (see
// Plan): mcp install says so and writes nothing.
var ErrCannotEdit = errors.New("cannot edit the file")

// editError is a refusal of Plan: its message, ErrCannotEdit and the cause
// (hujson's error), if any.
type editError struct {
	msg   string
	cause error
}

func (e *editError) Error() string   { return e.msg }
func (e *editError) Unwrap() []error { return []error{ErrCannotEdit, e.cause} }

func cannotEdit(cause error, format string, a ...any) error {
	return &editError{msg: fmt.Sprintf(format, a...), cause: cause}
}

// Result is what Plan made of a file.
type Result struct {
	// Content is the file as it is to be written.
	Content []byte
	// Changed is false when the file already holds the entry as is.
	Changed bool
	// Replaced is true when an entry of that name was there, different;
	// Created when there was no file (or an empty one).
	Replaced, Created bool
}

// Action names what Plan did: created (a new file), added (the entry
// added to a file), replaced (an older entry of that name replaced), or
// unchanged.
func (r Result) Action() string {
	switch {
	case r.Created:
		return "created"
	case r.Replaced:
		return "replaced"
	case r.Changed:
		return "added"
	}
	return "unchanged"
}

// Setup is what `mcp install` knows of this machine: the binary, the
// connection settings chosen for this shell, the directories as the
// command line resolves them and as the profile alone would give them, and which
// settings come from the environment only.
type Setup struct {
	Executable string
	// Profile is the profile chosen by --profile or by the environment
	// (A2A_COURIER_PROFILE): the assistant's process has neither, so the
	// entry names it. "" when the config file's default applies.
	Profile string
	// Flags are the other connection flags in use, as they go on the
	// entry's command line: --api-key-file and --token-file with absolute
	// paths (a path, never a secret), --kibana-url, --space.
	Flags []string
	// ConfigDir and StateDir are the directories in use; HomeConfigDir and
	// HomeStateDir those the assistant's process would find with the
	// profile's variables alone (userdirs.Env.ProfileOnly: HOME, on
	// Windows USERPROFILE, APPDATA and LOCALAPPDATA).
	ConfigDir, StateDir, HomeConfigDir, HomeStateDir string
	// EnvOnly names the Kibana settings given by the environment only
	// (KIBANA_URL, KIBANA_API_KEY, KIBANA_SPACE_ID).
	EnvOnly []string
	// EnvTLS names A2A_COURIER_CA_CERT and A2A_COURIER_INSECURE when the
	// environment alone sets them.
	EnvTLS []string
	// EnvToken is set when A2A_COURIER_TOKEN (with its
	// A2A_COURIER_TOKEN_ORIGIN) is set in this environment.
	EnvToken bool
	// PeerTokenEnv maps a peer of the config file to its token_env
	// variable, for the variables this environment sets.
	PeerTokenEnv map[string]string
	// Missing lists what the entry's process finds nowhere of the Kibana
	// connection (nor does this shell's environment give it), as config
	// set names it: "kibana-url", "api-key". Broken is
	// why that process cannot load its settings at all. Check fills
	// them, with EnvOnly and EnvTLS.
	Missing []string
	Broken  string
	// What Check found: whether the config file has peers, and which
	// file and profile the entry's process reads.
	peers                    bool
	configFile, entryProfile string
}

// Entry is the server entry of a set-up: this binary's absolute path and
// mcp, with --profile and the connection flags in use, and in its env only
// the directories that are not the default ones: never a key or a token.
func (s Setup) Entry() Entry {
	e := Entry{Name: "a2a-courier", Command: s.Executable, Args: []string{"mcp"}, Env: map[string]string{}}
	if s.Profile != "" {
		e.Args = append(e.Args, "--profile", s.Profile)
	}
	e.Args = append(e.Args, s.Flags...)
	if s.ConfigDir != s.HomeConfigDir {
		e.Env["A2A_COURIER_CONFIG_DIR"] = s.ConfigDir
	}
	if s.StateDir != s.HomeStateDir {
		e.Env["A2A_COURIER_STATE_DIR"] = s.StateDir
	}
	return e
}

// Warnings say, a line each, what an assistant started from its own
// process will lack: the settings the environment alone gives here, and a
// binary go run built in a temporary directory.
func (s Setup) Warnings(t Target) []string {
	w := s.configWarnings(t)
	lacks := fmt.Sprintf("from this shell's environment only, which %s's process will not have", t)
	if len(s.EnvOnly) > 0 {
		var sets []string
		for _, v := range s.EnvOnly {
			if envSetting[v] != "" {
				if v == "KIBANA_API_KEY" {
					sets = append(sets, shellcmd.FromFile("a2a-courier config set api-key", "key-file"))
				} else {
					sets = append(sets, "a2a-courier config set "+envSetting[v])
				}
			}
		}
		w = append(w, fmt.Sprintf("%s %s: keep %s in the config file (%s), then check with a2a-courier doctor",
			names("setting", s.EnvOnly), lacks, map[bool]string{true: "it", false: "them"}[len(s.EnvOnly) == 1], strings.Join(sets, "; ")))
	}
	if len(s.EnvTLS) > 0 {
		w = append(w, fmt.Sprintf("%s %s: keep it in the config file (a2a-courier config set ca-cert <pem-file>, or config set insecure true)", names("setting", s.EnvTLS), lacks))
	}
	if s.EnvToken {
		w = append(w, "the token of A2A_COURIER_TOKEN (and A2A_COURIER_TOKEN_ORIGIN) comes "+lacks+": name the agent as a peer of the config file with a token_file, "+
			"or run mcp install with --token-file <file>")
	}
	peers := make([]string, 0, len(s.PeerTokenEnv))
	for p := range s.PeerTokenEnv {
		peers = append(peers, p)
	}
	sort.Strings(peers)
	for _, p := range peers {
		w = append(w, fmt.Sprintf("peer %s takes its token from %s, which comes %s: give the peer a token_file in the config file instead", p, s.PeerTokenEnv[p], lacks))
	}
	if strings.Contains(s.Executable, string(filepath.Separator)+"go-build") {
		w = append(w, s.Executable+" is a temporary build of go run, gone when it exits: install the binary (go install) and run mcp install with it")
	}
	return w
}

// envSetting is the config set line (after "config set") that keeps in
// the config file what a Kibana variable gives.
var envSetting = map[string]string{"KIBANA_URL": "kibana-url <url>", "KIBANA_API_KEY": "api-key", "KIBANA_SPACE_ID": "space <id>"}

// names is "the setting X comes" or "the settings X, Y and Z come".
func names(what string, n []string) string {
	if len(n) == 1 {
		return "the " + what + " " + n[0] + " comes"
	}
	return "the " + what + "s " + strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1] + " come"
}

// Plan adds the entry to a target's file content (nil: a file not there
// yet; empty: a file with nothing in it), or replaces an entry of the same
// name that differs. The rest of the file is kept byte for byte: other
// keys and servers, their order and layout, comments and trailing commas
// (VS Code's format is JSON with comments), a UTF-8 byte order mark; the
// entry is written in the file's own indentation.
func Plan(t Target, existing []byte, e Entry) (Result, error) {
	if e.Name == "" || e.Command == "" {
		return Result{}, errors.New("the entry needs a name and a command")
	}
	key := serversKey(t)
	bom, body := splitBOM(existing)
	if len(bytes.TrimSpace(body)) == 0 {
		out, err := json.MarshalIndent(map[string]any{key: map[string]any{e.Name: e.value(t)}}, "", "  ")
		if err != nil {
			return Result{}, err
		}
		return Result{Content: append(append(bom, out...), '\n'), Changed: true, Created: existing == nil}, nil
	}
	res, err := plan(t, key, body, e)
	switch {
	case err != nil:
		return Result{}, err
	case !res.Changed:
		return Result{Content: existing}, nil
	}
	res.Content = append(bom, res.Content...)
	return res, nil
}

// utf8BOM is the byte order mark some editors (Notepad) begin a UTF-8 file
// with; JSON parsers refuse it, the assistants' readers skip it.
var utf8BOM = []byte("\ufeff")

// splitBOM returns a file's byte order mark (nil when it has none) and
// what follows it.
func splitBOM(b []byte) (bom, body []byte) {
	if bytes.HasPrefix(b, utf8BOM) {
		return append([]byte{}, utf8BOM...), b[len(utf8BOM):]
	}
	return nil, b
}

// plan is Plan of a file that holds something, without its byte order
// mark.
func plan(t Target, key string, existing []byte, e Entry) (Result, error) {
	doc, err := parseConfig(existing)
	if err != nil {
		return Result{}, err
	}
	top, ok := doc.Value.(*hujson.Object)
	if !ok {
		return Result{}, cannotEdit(nil, "the file's top level is not a JSON object")
	}
	if err := unique(top, " at its top level", key); err != nil {
		return Result{}, err
	}
	unit := indentUnit(top)
	// The indentation of the servers' line: that of the top level's
	// members, or none when they are on its own line ({"mcpServers": {}}).
	inner := memberIndent(top, unit)
	if len(top.Members) > 0 {
		if _, ok := lineIndent(top.Members[0].Name.BeforeExtra); !ok {
			inner = ""
		}
	}
	replaced := false
	switch servers := member(top, key); {
	case servers == nil:
		addMember(top, key, map[string]any{e.Name: e.value(t)}, "", unit)
	default:
		obj, ok := servers.Value.(*hujson.Object)
		if !ok {
			return Result{}, cannotEdit(nil, "%q in the file is not an object", key)
		}
		if err := unique(obj, path(key), e.Name); err != nil {
			return Result{}, err
		}
		current := member(obj, e.Name)
		if err := uniqueInEntry(current, key, e.Name); err != nil {
			return Result{}, err
		}
		if current == nil {
			addMember(obj, e.Name, e.value(t), inner, unit)
			break
		}
		changed, err := mergeEntry(current, e.value(t), memberIndent(obj, inner+unit), unit)
		if err != nil {
			return Result{}, err
		}
		if !changed {
			return Result{Content: existing}, nil
		}
		replaced = true
	}
	out := doc.Pack()
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return Result{Content: out, Changed: true, Replaced: replaced}, nil
}

// member returns the value of the first member of obj named name.
func member(obj *hujson.Object, name string) *hujson.Value {
	for i := range obj.Members {
		if got, ok := memberName(obj.Members[i]); ok && got == name {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// uniqueInEntry refuses an entry (nil: none) that has a member of ours
// (type, command, args, env, and in env our variables) twice.
func uniqueInEntry(entry *hujson.Value, key, name string) error {
	obj, ok := (*hujson.Object)(nil), false
	if entry != nil {
		obj, ok = entry.Value.(*hujson.Object)
	}
	if !ok {
		return nil
	}
	if err := unique(obj, path(key, name), "type", "command", "args", "env"); err != nil {
		return err
	}
	if env := member(obj, "env"); env != nil {
		if envObj, ok := env.Value.(*hujson.Object); ok {
			return unique(envObj, path(key, name, "env"), OwnedEnv...)
		}
	}
	return nil
}

// lineIndent is the whitespace after the last newline of b, and whether b
// holds a newline at all.
func lineIndent(b []byte) (string, bool) {
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return "", false
	}
	return string(bytes.TrimRight(b[i+1:], "\r")), true
}

// indentUnit guesses one level of the file's indentation from its
// top-level members (two spaces when it cannot tell).
func indentUnit(top *hujson.Object) string {
	if len(top.Members) > 0 {
		if ind, ok := lineIndent(top.Members[0].Name.BeforeExtra); ok && ind != "" {
			return ind
		}
	}
	return "  "
}

// memberIndent is the indentation of obj's members, or def.
func memberIndent(obj *hujson.Object, def string) string {
	if len(obj.Members) > 0 {
		if ind, ok := lineIndent(obj.Members[0].Name.BeforeExtra); ok {
			return ind
		}
	}
	return def
}

// formatted is v as a JSON value written with the file's indentation: its
// first line where it stands, the next ones after prefix.
func formatted(v any, prefix, unit string) (hujson.Value, error) {
	b, err := json.MarshalIndent(v, prefix, unit)
	if err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(b)
}

// addMember appends name: v to obj, after its last member, where a person
// would write it: on a line of its own in the members' indentation (or, in
// a file written on one line, on that line), with a trailing comma when
// the object's members have one. Comments that followed the last member
// stay with it.
func addMember(obj *hujson.Object, name string, v any, parentIndent, unit string) {
	indent := memberIndent(obj, parentIndent+unit)
	closing, multiline := lineIndent(obj.AfterExtra)
	// head is what stays before the new member of what followed the
	// last one: all of it but the closing brace's own indentation.
	head := obj.AfterExtra[:len(obj.AfterExtra)-len(closing)]
	if len(obj.Members) > 0 {
		_, multiline = lineIndent(obj.Members[0].Name.BeforeExtra)
	} else if !multiline {
		// An empty object on one line ({} or { /* a comment */ }): written
		// out, its brace on a line of its own in its parent's indentation.
		multiline, head, closing = true, obj.AfterExtra, parentIndent
	}
	trailing := len(obj.Members) > 0 && obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	_, spaced := lineStyle(obj)
	nv, err := formatted(v, indent, unit)
	if err != nil || !multiline {
		// One line, as the rest is, spaced as it is.
		nv = oneLine(v, spaced)
	}
	quoted, _ := json.Marshal(name)
	var before hujson.Extra
	switch {
	case multiline:
		// What followed the last member (a comment after its comma) stays
		// before the new one; the closing brace keeps its own line.
		if !bytes.HasSuffix(head, []byte("\n")) {
			head = append(bytes.TrimRight(append(hujson.Extra{}, head...), " \t"), '\n')
		}
		before = append(append(hujson.Extra{}, head...), indent...)
		obj.AfterExtra = hujson.Extra("\n" + closing)
	case len(obj.Members) > 0 && spaced:
		before = hujson.Extra(" ") // after the comma, as in `{"a": 1, "b": 2}`
	}
	nv.BeforeExtra = nil
	if multiline || spaced {
		nv.BeforeExtra = hujson.Extra(" ")
	}
	nv.AfterExtra = nil
	if trailing {
		nv.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: before, Value: hujson.Literal(quoted)},
		Value: nv,
	})
}

// sameJSON compares a value of the file with the entry, as JSON values
// (whitespace, comments and key order aside).
func sameJSON(v *hujson.Value, want []byte) (bool, error) {
	c := v.Clone()
	c.Standardize()
	// As numbers, as written: 1e999 is a number JSON allows, not a float64.
	var a, b any
	if err := decodeNumbers(c.Pack(), &a); err != nil {
		return false, err
	}
	if err := decodeNumbers(want, &b); err != nil {
		return false, err
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb), nil
}

func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// maxFileSize bounds the configuration file read: an assistant's MCP
// configuration is a few kilobytes.
const maxFileSize = 8 << 20

// mergeEntry updates an existing entry member by member: the members an
// entry of ours holds (type, command, args, and in env the variables of
// ours) are set to the new entry's, and every other member is the user's
// and stays as it is, with its comments and layout (Gemini's "timeout" and
// "trust", a "cwd", a variable added to env by hand). indent is that of
// the entry's own line. It reports whether anything changed.
func mergeEntry(current *hujson.Value, want server, indent, unit string) (bool, error) {
	obj, ok := current.Value.(*hujson.Object)
	if !ok {
		// Not an object: nothing of the user's to keep in it.
		nv, err := formatted(want, indent, unit)
		if err != nil {
			return false, err
		}
		current.Value = nv.Value
		return true, nil
	}
	changed := false
	set := func(o *hujson.Object, parent, key string, v any) error {
		c, err := setMember(o, key, v, parent, unit)
		changed = changed || c
		return err
	}
	if want.Type != "" || member(obj, "type") != nil {
		// A stdio server: any other type (an old "sse" entry) is wrong.
		if err := set(obj, indent, "type", "stdio"); err != nil {
			return false, err
		}
	}
	if err := set(obj, indent, "command", want.Command); err != nil {
		return false, err
	}
	if err := set(obj, indent, "args", want.Args); err != nil {
		return false, err
	}
	env := member(obj, "env")
	envObj, isObj := (*hujson.Object)(nil), false
	if env != nil {
		envObj, isObj = env.Value.(*hujson.Object)
	}
	switch {
	case env == nil && len(want.Env) == 0:
	case env == nil || !isObj:
		if err := set(obj, indent, "env", want.Env); err != nil {
			return false, err
		}
	default:
		inner := memberIndent(obj, indent+unit)
		had := len(envObj.Members)
		for _, k := range OwnedEnv {
			if v, ok := want.Env[k]; ok {
				if err := set(envObj, inner, k, v); err != nil {
					return false, err
				}
			} else if removeMember(envObj, k) {
				changed = true
			}
		}
		if had > 0 && len(envObj.Members) == 0 {
			removeMember(obj, "env") // it held ours only
		}
	}
	return changed, nil
}

// OwnedEnv are the variables of an entry's env that mcp install writes
// (or removes, when they are the defaults); any other is the user's.
var OwnedEnv = []string{"A2A_COURIER_CONFIG_DIR", "A2A_COURIER_STATE_DIR"}

// setMember sets obj's member key to v (adding it when missing), written
// in the file's indentation (parent: that of obj's own line). It reports
// whether the file changed.
func setMember(obj *hujson.Object, key string, v any, parent, unit string) (bool, error) {
	m := member(obj, key)
	if m == nil {
		addMember(obj, key, v, parent, unit)
		return true, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	if same, err := sameJSON(m, b); err != nil || same {
		return false, err
	}
	// In the layout of what it replaces: on one line in an object written
	// on one line, or where the old value was on one line.
	oneLined, spaced := lineStyle(obj)
	if oneLined || !bytes.Contains(hujson.Value{Value: m.Value}.Pack(), []byte("\n")) {
		m.Value = oneLine(v, spaced).Value
		return true, nil
	}
	nv, err := formatted(v, memberIndent(obj, parent+unit), unit)
	if err != nil {
		return false, err
	}
	m.Value = nv.Value
	return true, nil
}

// lineStyle says how an object is written: its members on one line (no
// line break before the first), and spaced (a space after the first
// member's colon: `{"a": 1, "b": 2}`, not `{"a":1,"b":2}`). An empty
// object is neither one line nor compact.
func lineStyle(obj *hujson.Object) (oneLined, spaced bool) {
	if len(obj.Members) == 0 {
		return false, true
	}
	_, multi := lineIndent(obj.Members[0].Name.BeforeExtra)
	return !multi, len(obj.Members[0].Value.BeforeExtra) > 0
}

// oneLine is v as JSON on one line, compact or spaced (`["a", "b"]`,
// `{"k": "v"}`).
func oneLine(v any, spaced bool) hujson.Value {
	b, _ := json.Marshal(v)
	if spaced {
		var out []byte
		inString := false
		for i := 0; i < len(b); i++ {
			c := b[i]
			out = append(out, c)
			switch {
			case inString && c == '\\':
				i++
				out = append(out, b[i])
			case c == '"':
				inString = !inString
			case !inString && (c == ',' || c == ':'):
				out = append(out, ' ')
			}
		}
		b = out
	}
	nv, _ := hujson.Parse(b)
	return nv
}

// removeMember removes obj's member key, keeping a trailing comma where
// there was one (and none where there was none). It reports whether there
// was one.
func removeMember(obj *hujson.Object, key string) bool {
	for i := range obj.Members {
		var got string
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); !ok || json.Unmarshal(lit, &got) != nil || got != key {
			continue
		}
		last := i == len(obj.Members)-1
		after := obj.Members[i].Value.AfterExtra
		obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
		if last && i > 0 {
			obj.Members[i-1].Value.AfterExtra = after
		}
		return true
	}
	return false
}

// Install plans the entry into the target's file and, unless dryRun,
// writes it: atomically (a temporary file in the same directory, then a
// rename), keeping the file's mode and owner (a file of another user
// edited by root stays that user's), 0600 for a new file, its directory
// created 0700 when missing. A file that is a symbolic link (a dotfiles
// repository's) stays one: the file it points to is the one written. What
// is not a regular file (a named pipe, a device) is refused before it is
// opened, and so is a file larger than maxFileSize, and a file with more
// than one hard link: the rename would split them, the other names
// keeping the old content.
func Install(path string, t Target, e Entry, dryRun bool) (Result, error) {
	path, err := resolveLink(path)
	if err != nil {
		return Result{}, err
	}
	existing, mode, own, err := readConfig(path)
	if err != nil {
		return Result{}, err
	}
	res, err := Plan(t, existing, e)
	if err != nil || !res.Changed {
		return res, err
	}
	if own.links > 1 {
		return Result{}, fmt.Errorf("the file has %d hard links, which writing a new version would split (the other names keeping the old content): "+
			"make them symbolic links to it, or add the entry by hand", own.links)
	}
	if dryRun {
		return res, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Result{}, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return Result{}, err
	}
	werr := keepOwner(f, own)
	if werr == nil {
		_, werr = f.Write(res.Content)
	}
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		if rerr := ownfile.Rename(f.Name(), path); rerr != nil {
			werr = &ReplaceError{Target: t, Err: rerr}
		}
	}
	if werr != nil {
		os.Remove(f.Name())
		return Result{}, werr
	}
	return res, nil
}

// ReplaceError is a new version of the file that could not take the
// place of the old one (on Windows most often because the assistant holds
// the file open, which ownfile.Rename waited for in vain).
type ReplaceError struct {
	Target Target
	Err    error
}

func (e *ReplaceError) Error() string {
	err := errUnwrapped(e.Err)
	if le := (*os.LinkError)(nil); errors.As(err, &le) {
		err = le.Err // the paths are a temporary file's and the file's, which the caller names
	}
	return "the new version could not replace the file: " + err.Error()
}

func (e *ReplaceError) Unwrap() error { return e.Err }

// Title is the assistant's name as its users know it.
func (t Target) Title() string {
	switch t {
	case ClaudeDesktop:
		return "Claude Desktop"
	case Cursor:
		return "Cursor"
	case VSCode:
		return "VS Code"
	case Gemini:
		return "Gemini CLI"
	}
	return string(t)
}

// errUnwrapped is the error of a system call without the path it was
// made on (that of a temporary file, meaningless to the user).
func errUnwrapped(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolveLink returns the file a path names: the path itself, or, for a
// symbolic link, the file it points to (which must be there).
func resolveLink(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		to, _ := os.Readlink(path)
		return "", fmt.Errorf("a symbolic link to %s, which cannot be read (%v): create that file or remove the link", to, errors.Unwrap(err))
	}
	return real, nil
}

// readConfig reads a configuration file (nil when there is none yet), the
// mode to keep (0600 for a new one) and its owner, checking its type
// before it is opened: a named pipe would block the read for ever.
func readConfig(path string) ([]byte, os.FileMode, owner, error) {
	// boundedfile looks before it opens, opens O_NONBLOCK (a FIFO swapped
	// in meanwhile cannot block) and checks what it opened.
	b, fi, err := boundedfile.Read(path, maxFileSize)
	var nr *boundedfile.NotRegularError
	var tl *boundedfile.TooLargeError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, 0o600, owner{}, nil
	case errors.As(err, &nr):
		return nil, 0, owner{}, fmt.Errorf("not a regular file (%s): a2a-courier edits a JSON file only", kind(nr.Mode))
	case errors.As(err, &tl):
		return nil, 0, owner{}, fmt.Errorf("%d bytes: larger than an MCP configuration can be (at most %d MiB)", tl.Size, maxFileSize>>20)
	case err != nil:
		return nil, 0, owner{}, err
	}
	if b == nil {
		b = []byte{} // a file, empty: not one to create
	}
	return b, fi.Mode().Perm(), ownerOf(fi), nil
}

// kind names a file type that is not a regular file.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
