package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// argumentErrors says, of a tool call whose arguments the tool's input
// schema refuses, what is wrong in the tool's terms, as the tools' own
// refusals do (a line, a hint, code usage): "unknown argument bogus", not
// the validator's `validating "arguments": validating root: unexpected
// additional properties ["bogus"]`.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			if msg, ok := argumentError(tc.Text); ok {
				out, doc, _ := toolError("usage", msg, "tools/list gives each tool's arguments and their types")
				out.StructuredContent = doc
				return out, nil
			}
		}
		return res, err
	}
}

var (
	schemaName = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	schemaType = regexp.MustCompile(`^validating /properties/([^:/]+): type: .* has type "(\w+)", want "(\w+)"$`)
)

// argumentError is the text of the SDK's refusal of a call's arguments in
// the tool's terms; ok false when text is no such refusal.
func argumentError(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, `validating "arguments": `)
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "validating root: ")
	if list, ok := strings.CutPrefix(rest, "unexpected additional properties "); ok {
		var names []string
		for _, q := range schemaName.FindAllString(list, -1) {
			if n, err := strconv.Unquote(q); err == nil {
				names = append(names, quoted(n, 100))
			}
		}
		if len(names) == 1 {
			return "unknown argument " + names[0], true
		}
		if len(names) > 1 {
			return "unknown arguments " + strings.Join(names, ", "), true
		}
	}
	if m := schemaType.FindStringSubmatch(rest); m != nil {
		return fmt.Sprintf("bad arguments: %s must be %s, not %s", quoted(m[1], 100), m[3], m[2]), true
	}
	return "bad arguments: " + quoted(rest, 200), true
}
