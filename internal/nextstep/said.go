package nextstep

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The values a Text holds are rendered for its caller where it is
// printed: to people (a shell, --json) a step is its command line and a
// flag its name; to the MCP server's tools (Caller.Tool), which run no
// shell, a step is the tool that does the same with its arguments ("the
// result tool with context_id "c-1" and wait_seconds") and a flag the
// argument that stands for it (context_id). A command no tool serves is
// one to "run `a2a-courier doctor` in a terminal".

// Quoted is a step said in backquotes in a sentence: "`a2a-courier
// discover` lists the agents"; to the tools, "the discover tool lists the
// agents".
type Quoted Step

// Quoted is s in backquotes.
func (s Step) Quoted() Quoted { return Quoted(s) }

// Run is "run `<step>`" in a sentence; to the tools, "call the result tool
// with …".
type Run Step

// Run is "run `s`".
func (s Step) Run() Run { return Run(s) }

// Opt is a flag named in a sentence ("leave out --context"); to the
// tools, the argument that stands for it (context_id), or the flag itself
// for one that no tool takes.
func Opt(flag string) Arg { return Arg{Flag: flag, Bool: true} }

// OptHole is a flag with a placeholder in a sentence ("or --url <agent
// URL>"); to the tools, "url <agent URL>".
func OptHole(flag, name string) Arg { return Arg{Flag: flag, Value: "<" + name + ">", Hole: true} }

// Per is a text said one way to people and another to the tools: where
// the words themselves differ (the contextId send-async printed, the
// context_id a tool returned).
func Per(people, tool Text) Text { return Say("%s", per{people, tool}) }

type per struct{ people, tool Text }

// ContextIDFrom is "the contextId printed by <commands>" ("send-async",
// "send or send-async"); to the tools, the context_id their send or
// send_async returned.
func ContextIDFrom(commands string) Text {
	return Per(Plain("the contextId printed by "+commands), Plain("the context_id that the send or send_async tool returned"))
}

// MaxWait is a task's maximum wait named in a sentence by its flag and
// value ("--max-wait 40s"); no tool takes it (the server's command line
// or config file sets it), so to the tools it is said with where it is
// set. its: "its maximum wait of 40s, …" rather than "maximum wait of …".
func MaxWait(value string) Text {
	return Per(Plain("--max-wait "+value), Plain("its maximum wait of "+value+", "+maxWaitSet))
}

// ItsMaxWait is "its --max-wait (2h)" in a sentence; to the tools, "its
// maximum wait (2h, set …)".
func ItsMaxWait(value string) Text {
	return Per(Plain("its --max-wait ("+value+")"), Plain("its maximum wait ("+value+", "+maxWaitSet+")"))
}

const maxWaitSet = "set on the command line (--max-wait) or in the config file (max_wait)"

// tool says a step to the tools: the tool and its arguments, or the
// command to run in a terminal. call: the sentence's verb goes with it
// ("call the result tool …"; run … in a terminal either way).
func (c Caller) tool(s Step, call bool) string {
	cmd, ok := Tools[s.Command]
	if !ok {
		return "run `" + c.Line(s) + "` in a terminal"
	}
	args := c.toolArgs(s, cmd)
	said := "the " + cmd.Tool + " tool"
	switch len(args) {
	case 0:
	case 1:
		said += " with " + args[0]
	default:
		said += " with " + strings.Join(args[:len(args)-1], ", ") + " and " + args[len(args)-1]
	}
	if call {
		return "call " + said
	}
	return said
}

// toolArgs are a step's arguments as its tool's, in the step's order:
// `context_id "c-1"`, `wait_seconds 30`, `any`, the placeholders as they
// are (`agent <peer>`).
func (c Caller) toolArgs(s Step, cmd ToolCommand) []string {
	var args []string
	set := func(name, said string) {
		for i, a := range args {
			if a == name || strings.HasPrefix(a, name+" ") {
				if said != name {
					args[i] = said // --wait, then --timeout 30s
				}
				return
			}
		}
		args = append(args, said)
	}
	names := cmd.Positionals
	if s.Command == "fetch" && s.Names("--task") {
		names = []string{"agent"} // fetch --task T <peer>
	}
	var ids []string
	idAt, positional := -1, 0
	for _, a := range s.Args {
		switch {
		case a.Flag == "" && s.Command == "result" && positional > 0:
			ids = append(ids, saidValue(a))
		case a.Flag == "":
			switch {
			case positional >= len(names):
			case names[positional] == "url" && a.Hole:
				set("url", "url (the peer's URL)") // a peer: cancel takes its URL
			case names[positional] == "url":
				set("url", fmt.Sprintf("url (the URL of peer %q)", a.Value))
			default:
				if names[positional] == "context_id" {
					idAt = len(args)
				}
				set(names[positional], names[positional]+" "+saidValue(a))
			}
			positional++
		default:
			name := ToolFlags[a.Flag]
			switch {
			case name == "":
			case a.Bool:
				set(name, name)
			case a.Flag == "--timeout":
				d, err := time.ParseDuration(a.Value)
				if err != nil {
					set(name, name+" "+a.Value)
					continue
				}
				set(name, name+" "+strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
			case a.Flag == "--limit" || a.Flag == "--round" || a.Flag == "--max-chars":
				set(name, name+" "+a.Value)
			default:
				set(name, name+" "+saidValue(a))
			}
		}
	}
	if s.Stdin {
		args = append(args, "the text as message")
	}
	if len(ids) > 0 && idAt >= 0 {
		first := strings.TrimPrefix(args[idAt], "context_id ")
		args[idAt] = "context_ids [" + strings.Join(append([]string{first}, ids...), ", ") + "]"
	}
	return args
}

// saidValue is a value of a step as a tool argument's: quoted as JSON,
// but for a placeholder, which the caller fills in.
func saidValue(a Arg) string {
	if a.Hole {
		return a.Value
	}
	return strconv.Quote(a.Value)
}

// flag says an argument named in a sentence (Opt, OptHole).
func (c Caller) flag(a Arg) string {
	name := ToolFlags[a.Flag]
	switch {
	case !c.Tool || name == "":
		return strings.Join(words([]Arg{a}), " ")
	case a.Bool:
		return name
	}
	return name + " " + saidValue(a)
}
