package mcpserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The commands' messages and hints are written for a shell: "`a2a-courier
// result X` shows it", "leave out --context". An MCP client runs no shell,
// so the texts of the tools' results say the same in tool terms: the
// result tool with context_id "X", leave out context_id. The documents
// (structuredContent) keep the commands' own fields as they are: they
// are the --json documents.

// command is what the text of a result makes of a command of the CLI: the
// tool that does the same (none: run it in a terminal), the tool's names
// of its positional arguments, and how many a command written without
// quotes in a sentence takes (the words after them are the sentence's).
type command struct {
	tool        string
	positionals []string
	bare        int
}

var commands = map[string]command{
	"send":       {"send", []string{"agent", "message"}, 2},
	"send-async": {"send_async", []string{"agent", "message"}, 2},
	"result":     {"result", []string{"context_id"}, 1},
	"fetch":      {"fetch", []string{"context_id", "agent"}, 1},
	"show":       {"show", []string{"conversation"}, 1},
	"cancel":     {"cancel", []string{"context_id", "url"}, 2},
	"get-card":   {"get_card", []string{"agent"}, 1},
	"discover":   {"discover", nil, 0},
	"history":    {"history", nil, 0},
	"tasks":      {"tasks", nil, 0},
	// No tool: run in a terminal.
	"config":     {"", nil, 3},
	"doctor":     {"", nil, 0},
	"skill":      {"", nil, 1},
	"mcp":        {"", nil, 1},
	"prune":      {"", nil, 0},
	"version":    {"", nil, 0},
	"demo":       {"", nil, 0},
	"dev-server": {"", nil, 0},
	"completion": {"", nil, 1},
	"help":       {"", nil, 1},
}

// toolFlags are the flags of the commands that are tool arguments, by the
// tool's name; "" for one the tools have no use for (--json, the
// connection flags, which the server's own command line sets).
var toolFlags = map[string]string{
	"--context": "context_id", "--task": "task_id", "--url": "url", "--max-chars": "max_chars",
	"--wait": "wait_seconds", "--timeout": "wait_seconds", "--limit": "limit", "--agent": "agent",
	"--state": "state", "--any": "any", "--all-rounds": "all_rounds", "--round": "round",
	"--file": "files", "--data": "data",
}

// boolFlags are the flags that take no value.
var boolFlags = map[string]bool{"--wait": true, "--json": true, "--any": true, "--all-rounds": true, "--dry-run": true,
	"--help": true, "-h": true, "-v": true, "--verbose": true, "--progress": true, "--no-stream": true, "--force": true}

// commandStart finds "a2a-courier <command>" in a text.
var commandStart = regexp.MustCompile("(`?)a2a-courier (" + commandNames() + `)\b`)

func commandNames() string {
	// Longest first: send-async before send.
	return "send-async|send|result|fetch|show|cancel|get-card|discover|history|tasks|config|doctor|skill|mcp|prune|version|demo|dev-server|completion|help"
}

// proseFlag is a flag named in a sentence ("leave out --context").
var proseFlag = regexp.MustCompile(`--(context|task|url|max-chars|wait|timeout|limit|agent|state|any|all-rounds|round|file|data)\b(-?)`)

// toolTerms rewrites the command lines and flags of a message or hint of
// the CLI into tool terms.
func toolTerms(s string) string {
	if !strings.Contains(s, "a2a-courier ") && !strings.Contains(s, "--") && !strings.Contains(s, "on stdin") && !strings.Contains(s, "send-async") {
		return s
	}
	var b strings.Builder
	for {
		loc := commandStart.FindStringSubmatchIndex(s)
		if loc == nil || loc[0] > 0 && isWordByte(s[loc[0]-1]) && loc[3] == loc[2] {
			if loc == nil {
				b.WriteString(prose(s))
				return b.String()
			}
			// "xa2a-courier send": not a command line.
			b.WriteString(prose(s[:loc[1]]))
			s = s[loc[1]:]
			continue
		}
		name := s[loc[4]:loc[5]]
		before, rest := s[:loc[0]], s[loc[5]:]
		ticked := loc[3] > loc[2]
		var words []string
		var end int
		if close := strings.IndexByte(rest, '`'); ticked && close >= 0 {
			words, end = shellWords(strings.TrimSpace(rest[:close])), close+1
		} else {
			if ticked {
				before += "`"
			}
			words, end = bareWords(rest, commands[name].bare)
		}
		cmd := commands[name]
		if cmd.tool == "" {
			line := strings.TrimSpace("a2a-courier " + name + " " + strings.Join(words, " "))
			before = strings.TrimSuffix(before, "run ")
			b.WriteString(prose(before) + "run `" + line + "` in a terminal")
		} else {
			if strings.HasSuffix(before, "run ") {
				before = strings.TrimSuffix(before, "run ") + "call "
			}
			b.WriteString(prose(before) + toolCall(cmd, words))
		}
		s = rest[end:]
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '/'
}

// proseTerms are the phrases of the commands' texts that say what a tool
// says otherwise.
var proseTerms = strings.NewReplacer(
	"(the answer on stdin)", "(the answer as message)",
	"the contextId printed by send-async", "the context_id that the send or send_async tool returned",
)

// A task's maximum wait is --max-wait on the command line, which no tool
// takes: the texts that name it say what it is and where it is set.
var (
	maxWaitOf    = regexp.MustCompile(`\(--max-wait ([^()\s]+)\)`)     // (--max-wait 40s)
	itsMaxWait   = regexp.MustCompile(`\bits --max-wait \(([^()]+)\)`) // its --max-wait (40s)
	maxWaitFlag  = regexp.MustCompile(`maximum wait \(--max-wait\)`)
	otherMaxWait = regexp.MustCompile(`(the task's |its )?--max-wait\b(-?)`)
)

// maxWaitSet stands, while the rules above apply, for where a task's
// maximum wait is set (which names the flag itself).
const maxWaitSet = "\x00"

func maxWaitTerms(s string) string {
	if !strings.Contains(s, "--max-wait") {
		return s
	}
	s = maxWaitOf.ReplaceAllString(s, "(its maximum wait of $1, "+maxWaitSet+")")
	s = itsMaxWait.ReplaceAllString(s, "its maximum wait ($1, "+maxWaitSet+")")
	s = maxWaitFlag.ReplaceAllString(s, "maximum wait ("+maxWaitSet+")")
	s = otherMaxWait.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, "-") {
			return m // a longer flag
		}
		owner, _, _ := strings.Cut(m, "--max-wait")
		if owner == "" {
			owner = "the "
		}
		return owner + "maximum wait (" + maxWaitSet + ")"
	})
	return strings.ReplaceAll(s, maxWaitSet, "set on the command line (--max-wait) or in the config file (max_wait)")
}

// prose rewrites what a sentence says of flags and stdin.
func prose(s string) string {
	s = maxWaitTerms(proseTerms.Replace(s))
	return proseFlag.ReplaceAllStringFunc(s, func(f string) string {
		if strings.HasSuffix(f, "-") {
			return f // a longer flag: --wait-timeout
		}
		return toolFlags[f]
	})
}

// bareWords reads the words of a command line written in a sentence
// without quotes, after its command: its flags and their values, at most
// n positional arguments, a redirection; the first other word is the
// sentence's again. It returns them and where they end.
func bareWords(s string, n int) ([]string, int) {
	var words []string
	pos, end, positionals := 0, 0, 0
	expectValue := false
	for {
		w, next := nextWord(s, pos)
		if w == "" {
			return words, end
		}
		switch {
		case expectValue:
			expectValue = false
		case w == "<" || w == ">":
			expectValue = true
		case w == "-" || !strings.HasPrefix(w, "-"):
			if positionals >= n && !flagAhead(s, pos) {
				return words, end
			}
			positionals++
		case !boolFlags[w] && !strings.Contains(w, "="):
			expectValue = true
		}
		if strings.HasPrefix(w, "'") {
			if u := shellWords(w); len(u) == 1 {
				w = u[0]
			}
		}
		words = append(words, w)
		pos, end = next, next
		if stop := trailing(s, next); stop && !expectValue {
			return words, end
		}
	}
}

// flagAhead reports whether a flag follows s[pos:] among the words of the
// same clause: then the words before it are a command's (result a b
// --any), not the sentence's (result c tells which).
func flagAhead(s string, pos int) bool {
	for {
		w, next := nextWord(s, pos)
		switch {
		case w == "":
			return false
		case strings.HasPrefix(w, "--"):
			return true
		case trailing(s, next):
			return false
		}
		pos = next
	}
}

// nextWord reads the word at s[pos:] after one space: a <placeholder> of
// several words as one, a 'quoted' one as one; without its trailing
// punctuation. "" when the sentence goes on otherwise (a comma, the end).
func nextWord(s string, pos int) (string, int) {
	if pos >= len(s) || s[pos] != ' ' {
		return "", pos
	}
	pos++
	start := pos
	switch {
	case pos < len(s) && s[pos] == '<' && pos+1 < len(s) && s[pos+1] != ' ':
		if i := strings.IndexByte(s[pos:], '>'); i > 0 {
			pos += i + 1
		}
	case pos < len(s) && s[pos] == '\'':
		if i := strings.IndexByte(s[pos+1:], '\''); i >= 0 {
			pos += i + 2
		}
	}
	for pos < len(s) && !strings.ContainsRune(" ,;)`\n", rune(s[pos])) {
		pos++
	}
	w := s[start:pos]
	// A sentence's full stop or colon is not the word's.
	for len(w) > 0 && strings.ContainsRune(".:", rune(w[len(w)-1])) && (pos == len(s) || s[pos] == ' ' || s[pos] == '\n') {
		w, pos = w[:len(w)-1], pos-1
	}
	return w, pos
}

// trailing reports whether the sentence's punctuation follows s[:pos].
func trailing(s string, pos int) bool {
	return pos < len(s) && s[pos] != ' '
}

// toolCall says a command line in tool terms: the result tool with
// context_id "X" and wait_seconds.
func toolCall(cmd command, words []string) string {
	var args []string
	add := func(name, value string) {
		switch {
		case name == "":
		case value == "":
			for _, a := range args {
				if a == name || strings.HasPrefix(a, name+" ") {
					return
				}
			}
			args = append(args, name)
		default:
			for i, a := range args {
				if a == name {
					args[i] = name + " " + value // --wait, then --timeout 30s
					return
				}
			}
			args = append(args, name+" "+value)
		}
	}
	var ids []string
	positional := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "<" || w == ">":
			i++
		case w == "-":
			args = append(args, "the text as message")
			positional++
		case !strings.HasPrefix(w, "-"):
			if cmd.tool == "result" && positional > 0 {
				ids = append(ids, w)
				continue
			}
			names := cmd.positionals
			if cmd.tool == "fetch" && hasFlag(words, "--task") {
				names = []string{"agent"} // fetch --task T <peer>
			}
			switch {
			case positional >= len(names):
			case names[positional] == "url" && strings.HasPrefix(w, "<"):
				add("url", "(the peer's URL)") // a peer: cancel takes its URL
			case names[positional] == "url":
				add("url", fmt.Sprintf("(the URL of peer %q)", w))
			default:
				add(names[positional], value(w))
			}
			positional++
		default:
			flag, v, hasValue := strings.Cut(w, "=")
			if !hasValue && !boolFlags[flag] && i+1 < len(words) {
				i++
				v = words[i]
			}
			add(toolFlags[flag], flagValue(flag, v))
		}
	}
	if len(ids) > 0 {
		for i, a := range args {
			if strings.HasPrefix(a, "context_id ") {
				all := append([]string{strings.TrimPrefix(a, "context_id ")}, quoteAll(ids)...)
				args[i] = "context_ids [" + strings.Join(all, ", ") + "]"
			}
		}
	}
	s := "the " + cmd.tool + " tool"
	switch len(args) {
	case 0:
		return s
	case 1:
		return s + " with " + args[0]
	}
	return s + " with " + strings.Join(args[:len(args)-1], ", ") + " and " + args[len(args)-1]
}

func hasFlag(words []string, flag string) bool {
	for _, w := range words {
		if w == flag || strings.HasPrefix(w, flag+"=") {
			return true
		}
	}
	return false
}

// value is a word as a tool argument's value: quoted as JSON, but for a
// placeholder (<contextId>, …).
func value(w string) string {
	if strings.HasPrefix(w, "<") || w == "…" || w == "..." {
		return w
	}
	return strconv.Quote(w)
}

func quoteAll(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = value(w)
	}
	return out
}

// flagValue is a flag's value as its tool argument's: --timeout 30s is
// wait_seconds 30; a flag with no value (--wait, --any) has none.
func flagValue(flag, v string) string {
	switch {
	case v == "":
		return ""
	case flag == "--timeout":
		if d, err := time.ParseDuration(v); err == nil {
			return fmt.Sprint(d.Seconds())
		}
		return v
	case flag == "--limit" || flag == "--round" || flag == "--max-chars":
		return v
	}
	return value(v)
}
