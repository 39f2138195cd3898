// Package nextstep holds the commands a2a-courier prints for its caller to
// run next (a resume, an answer, the command a hint names) as values: the
// command, its arguments, and, once rendered for a caller, the flags of
// the caller's own command line. A value is rendered once, where it is
// printed: as a shell line for people and for --json (Caller.Line), or as
// the MCP tool that does the same, with its arguments (Step.Tool). No
// printed text is parsed or rewritten to add flags to it.
package nextstep

import (
	"fmt"
	"strings"

	"github.com/a2a-courier/a2a-courier/internal/shellcmd"
)

// Arg is one word of a step after its command: a positional value (Flag
// ""), a flag with a value, or a flag alone (Bool).
type Arg struct {
	Flag, Value string
	// Bool marks a flag that takes no value (--wait).
	Bool bool
	// Hole marks a placeholder ("<taskId>"): the caller fills it in, so
	// it is printed as it is, not quoted.
	Hole bool
}

// Step is a command for the caller to run next.
type Step struct {
	Command string
	Args    []Arg
	// Stdin marks a command that reads its input on stdin: "-" ends it.
	Stdin bool
}

// New is the step of command with no arguments yet.
func New(command string) Step { return Step{Command: command} }

// with is s with one more argument; the arguments of s are never shared.
func (s Step) with(a Arg) Step {
	s.Args = append(append([]Arg(nil), s.Args...), a)
	return s
}

// Pos adds a positional value.
func (s Step) Pos(v string) Step { return s.with(Arg{Value: v}) }

// Flag adds a flag and its value.
func (s Step) Flag(name, v string) Step { return s.with(Arg{Flag: name, Value: v}) }

// Bool adds a flag that takes no value.
func (s Step) Bool(name string) Step { return s.with(Arg{Flag: name, Bool: true}) }

// Hole adds a placeholder the caller fills in: "<name>", or after flag
// ("--url <agent URL>") when flag is not "".
func (s Step) Hole(flag, name string) Step {
	return s.with(Arg{Flag: flag, Value: "<" + name + ">", Hole: true})
}

// Words adds the arguments of another step (an agent named by its peer or
// its --url, say).
func (s Step) Words(args []Arg) Step {
	for _, a := range args {
		s = s.with(a)
	}
	return s
}

// ReadsStdin is s reading its input on stdin.
func (s Step) ReadsStdin() Step { s.Stdin = true; return s }

// IsZero says s names no command.
func (s Step) IsZero() bool { return s.Command == "" }

// Names says s names the flag.
func (s Step) Names(flag string) bool {
	for _, a := range s.Args {
		if a.Flag == flag {
			return true
		}
	}
	return false
}

// words are the shell words of args, values quoted.
func words(args []Arg) []string {
	var w []string
	for _, a := range args {
		if a.Flag != "" {
			w = append(w, a.Flag)
		}
		switch {
		case a.Bool:
		case a.Hole:
			w = append(w, a.Value)
		default:
			w = append(w, shellcmd.Quote(a.Value))
		}
	}
	return w
}

// String is s as a shell line, with no flag of any caller.
func (s Step) String() string { return Caller{}.Line(s) }

// Flag of a caller's command line, as it was given.
type Flag struct{ Name, Value string }

// Caller is what of the caller's own command line a printed step keeps.
type Caller struct {
	// Conn are the connection flags as the caller gave them (--profile,
	// --kibana-url, --space, --api-key-file, --token-file), in that
	// order; none when the MCP server runs the command (they are the
	// server's own).
	Conn []Flag
	// Waits are the flags of a command that waits (--timeout as given,
	// --progress), which the steps of result and send keep.
	Waits []Arg
	// JSON: the caller asked for --json, which the steps it is to run
	// next (a resume, an answer) keep.
	JSON bool
	// Where names a setting a hint speaks of by where it came from
	// (config.Settings.Where); check: the hint says "check <setting>",
	// which Where words whole. Nil: by its variable.
	Where func(s Setting, check bool) string
	// Tool: the MCP server runs the command, and its texts say their
	// steps and flags in tool terms (said.go); its resume and answer
	// lines (Resume) stay command lines, which the server makes calls of.
	Tool bool
}

// reachesServer are the commands that take the connection flags.
var reachesServer = map[string]bool{"send-async": true, "send": true, "result": true, "fetch": true, "show": true, "cancel": true,
	"get-card": true, "discover": true, "history": true, "tasks": true, "doctor": true}

// Line is s as a shell line to run next in a hint or a message: the
// connection flags of the caller after the command name (but for one the
// step names, and none for a step that names its own --kibana-url: the
// caller's profile, space and key are for the caller's Kibana).
func (c Caller) Line(s Step) string {
	if s.IsZero() {
		return "" // no step: no command (a final task has nothing to resume)
	}
	w := []string{"a2a-courier", s.Command}
	if reachesServer[s.Command] && !s.Names("--kibana-url") {
		for _, f := range c.Conn {
			if !s.Names(f.Name) {
				w = append(w, f.Name, shellcmd.Quote(f.Value))
			}
		}
	}
	w = append(w, words(s.Args)...)
	if s.Stdin {
		w = append(w, "-")
	}
	return strings.Join(w, " ")
}

// Resume is s as the command a document or a report says to run next (a
// resume, an answer): Line, keeping also the caller's --timeout (for a
// command that waits: result, send) and --json. "" for no step.
func (c Caller) Resume(s Step) string {
	if s.IsZero() {
		return ""
	}
	if s.Command == "result" || s.Command == "send" {
		for _, a := range c.Waits {
			if !s.Names(a.Flag) {
				s = s.with(a)
			}
		}
	}
	if c.JSON && !s.Names("--json") {
		s = s.Bool("--json")
	}
	return c.Line(s)
}

// Setting is a setting a hint speaks of, by its variable.
type Setting string

// The settings hints name.
const (
	KibanaURL    Setting = "KIBANA_URL"
	KibanaAPIKey Setting = "KIBANA_API_KEY"
	KibanaSpace  Setting = "KIBANA_SPACE_ID"
)

// Check is "check <setting>" in a hint, rendered with where the setting
// came from (Caller.Where).
type Check Setting

// Text is a hint or a message for the caller: a format and its
// arguments, among them steps (rendered as Line), settings and checks
// (rendered by Caller.Where), rendered for a caller once, where printed.
type Text struct{ parts []part }

type part struct {
	format string
	args   []any
}

// Say is a text: format's verbs take args, a Step among them printed as
// its shell line and a Setting or a Check by where it came from.
func Say(format string, args ...any) Text {
	return Text{parts: []part{{format, args}}}
}

// Plain is a text with no step or setting in it.
func Plain(s string) Text {
	if s == "" {
		return Text{}
	}
	return Say("%s", s)
}

// Then is t followed by another text.
func (t Text) Then(format string, args ...any) Text {
	return Text{parts: append(append([]part(nil), t.parts...), part{format, args})}
}

// Append is t followed by u.
func (t Text) Append(u Text) Text {
	return Text{parts: append(append([]part(nil), t.parts...), u.parts...)}
}

// IsZero says t says nothing.
func (t Text) IsZero() bool { return len(t.parts) == 0 }

// Fix is t with its "check <s>" said as said: the space a recorded
// task was sent to, say, whatever the caller's settings are.
func (t Text) Fix(s Setting, said string) Text {
	out := Text{parts: make([]part, len(t.parts))}
	for i, p := range t.parts {
		args := make([]any, len(p.args))
		for j, a := range p.args {
			switch a := a.(type) {
			case Check:
				if Setting(a) == s {
					args[j] = fixed(said)
					continue
				}
			case Text:
				args[j] = a.Fix(s, said)
				continue
			case per:
				args[j] = per{a.people.Fix(s, said), a.tool.Fix(s, said)}
				continue
			}
			args[j] = a
		}
		out.parts[i] = part{p.format, args}
	}
	return out
}

// fixed is a check said already (Fix).
type fixed string

// String is t rendered with no flag of any caller and settings by their
// variables.
func (t Text) String() string { return Caller{}.Text(t) }

// Text renders t for the caller.
func (c Caller) Text(t Text) string {
	var b strings.Builder
	for _, p := range t.parts {
		args := make([]any, len(p.args))
		for i, a := range p.args {
			args[i] = c.arg(a)
		}
		fmt.Fprintf(&b, p.format, args...)
	}
	return b.String()
}

// arg is one argument of a text as printed for the caller.
func (c Caller) arg(a any) any {
	switch a := a.(type) {
	case Step:
		if c.Tool {
			return c.tool(a, false)
		}
		return c.Line(a)
	case Quoted:
		if c.Tool {
			return c.tool(Step(a), false)
		}
		return "`" + c.Line(Step(a)) + "`"
	case Run:
		if c.Tool {
			return c.tool(Step(a), true)
		}
		return "run `" + c.Line(Step(a)) + "`"
	case Arg:
		return c.flag(a)
	case per:
		if c.Tool {
			return c.Text(a.tool)
		}
		return c.Text(a.people)
	case Text:
		return c.Text(a)
	case Setting:
		if c.Where != nil {
			return c.Where(a, false)
		}
		return string(a)
	case Check:
		if c.Where != nil {
			return c.Where(Setting(a), true)
		}
		return "check " + string(a)
	case fixed:
		return string(a)
	}
	return a
}
