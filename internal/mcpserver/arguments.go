package mcpserver

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2a-courier/a2a-courier/internal/termui"
)

// The SDK checks a call's arguments against the tool's input schema before
// the tool runs, and refuses in its own words: `validating "arguments":
// validating root: unexpected additional properties ["bogus"]`, or a Go
// decoder's "cannot unmarshal … into Go struct field". checkCalls checks
// them first, against the same schema, and says what is wrong in the
// tool's terms: the argument, what it must be, and the arguments the tool
// takes. What it lets through the SDK takes too; a refusal of the SDK's
// it did not foresee is said in the same form, with the SDK's reason.

// addTool adds a tool as mcp.AddTool does, with its input schema (that of
// In, as schemaOf gives it, unless the tool has one) noted for checkCalls.
func addTool[In any](t *tools, s *mcp.Server, tool *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	if tool.InputSchema == nil {
		tool.InputSchema = schemaOf[In]()
	}
	if t.schemas == nil {
		t.schemas = map[string]*jsonschema.Schema{}
	}
	t.schemas[tool.Name] = tool.InputSchema.(*jsonschema.Schema)
	mcp.AddTool(s, tool, h)
}

// checkCalls is the server's middleware: a tools/call whose arguments do
// not fit its tool is answered with a tool error (isError, the message and
// a hint, as every refused argument is), and nothing runs.
func (t *tools) checkCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		schema := t.schemas[call.Params.Name]
		if schema == nil {
			return next(ctx, method, req) // the SDK's "unknown tool"
		}
		if aerr := checkArguments(call.Params.Name, schema, call.Params.Arguments); aerr != nil {
			return argResult(aerr), nil
		}
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r.IsError && r.GetError() != nil {
			// The SDK's own refusal (our tools never set one): its words
			// after ours.
			why := r.GetError().Error()
			for _, p := range []string{`validating "arguments": `, "validating root: "} {
				why = strings.TrimPrefix(why, p)
			}
			return argResult(refuse(takes(call.Params.Name, schema), "the arguments of the %s tool do not fit it: %s", call.Params.Name, termui.Escaped(why, 300))), nil
		}
		return res, err
	}
}

// argResult is a refused argument as the result of a call.
func argResult(e *argError) *mcp.CallToolResult {
	res, doc, _ := e.result()
	res.StructuredContent = doc
	return res
}

// takes names the arguments a tool takes, in its schema's order.
func takes(tool string, s *jsonschema.Schema) string {
	names := argNames(s)
	if len(names) == 0 {
		return "the " + tool + " tool takes no arguments"
	}
	last := len(names) - 1
	if last == 0 {
		return "the " + tool + " tool takes " + names[0]
	}
	return "the " + tool + " tool takes " + strings.Join(names[:last], ", ") + " and " + names[last]
}

func argNames(s *jsonschema.Schema) []string {
	names := append([]string{}, s.PropertyOrder...)
	if len(names) != len(s.Properties) {
		names = names[:0]
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	return names
}

// checkArguments checks a call's arguments (a JSON object, or none)
// against its tool's schema: no argument it does not take, every one it
// needs, each of its type (an integer written in digits, as the tool's
// Go type reads it).
func checkArguments(tool string, s *jsonschema.Schema, raw json.RawMessage) *argError {
	hint := takes(tool, s)
	var args map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			return refuse(hint, "the arguments of the %s tool must be a JSON object, not %s", tool, kindOf(raw))
		}
	}
	var unknown []string
	for name := range args {
		if s.Properties[name] == nil {
			unknown = append(unknown, strconv.Quote(termui.Escaped(name, 60)))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		what := "argument"
		if len(unknown) > 1 {
			what = "arguments"
		}
		return refuse("leave it out: each argument is described in the tool's input schema (tools/list)", "unknown %s %s; %s", what, strings.Join(unknown, ", "), hint)
	}
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			return refuse(hint, "missing argument %q: the %s tool needs it", name, tool)
		}
	}
	for _, name := range argNames(s) {
		v, ok := args[name]
		if !ok {
			continue
		}
		p := s.Properties[name]
		if want := typeMismatch(p, v); want != "" {
			return refuse(hint, "argument %q must be %s, not %s", name, want, given(v))
		}
		if p.Items == nil || v[0] != '[' {
			continue
		}
		var items []json.RawMessage
		json.Unmarshal(v, &items)
		for i, item := range items {
			if want := typeMismatch(p.Items, item); want != "" {
				return refuse(hint, "argument %q: item %d must be %s, not %s", name, i+1, want, given(item))
			}
		}
	}
	return nil
}

// typeMismatch is what a value must be (a string, an integer, …) when its
// schema's type does not take it, "" when it does.
func typeMismatch(s *jsonschema.Schema, v json.RawMessage) string {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return "" // any value
	}
	got := kindOf(v)
	var wants []string
	for _, t := range types {
		switch {
		case t == "null":
			if got == "null" {
				return ""
			}
			continue
		case t == "integer" && got == "a number":
			if _, err := strconv.ParseInt(string(v), 10, strconv.IntSize); err == nil {
				return ""
			}
		case t == "number" && got == "a number":
			if _, err := strconv.ParseFloat(string(v), 64); err == nil {
				return ""
			}
			wants = append(wants, "a number within ±1.8e308")
			continue
		case "a "+t == got || t == "array" && got == "an array" || t == "object" && got == "an object":
			return ""
		}
		wants = append(wants, article(t))
	}
	return strings.Join(wants, " or ")
}

// article is a schema type as a noun: "a string", "an array", "an integer
// (in digits)".
func article(t string) string {
	switch t {
	case "integer":
		return "an integer (in digits)"
	case "array", "object":
		return "an " + t
	}
	return "a " + t
}

// kindOf names a JSON value's type: "a string", "a number", "an object",
// "an array", "a boolean", "null".
func kindOf(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// given says what a value given is, for a refusal: a number as written
// (cut), else its type.
func given(v json.RawMessage) string {
	if k := kindOf(v); k != "a number" {
		return k
	}
	return termui.Escaped(string(v), 30)
}
