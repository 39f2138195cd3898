package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A refusal of the SDK's that checkArguments did not foresee is said in
// the same form as its own, the tool named with what it takes, the SDK's
// reason after it without its prefixes.
func TestSDKRefusalInTheToolsForm(t *testing.T) {
	tl := &tools{}
	s := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	addTool(tl, s, &mcp.Tool{Name: "history"}, func(context.Context, *mcp.CallToolRequest, historyIn) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	sdk := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		var r mcp.CallToolResult
		r.SetError(errors.New(`validating "arguments": validating root: something new` + "\x1b[2J"))
		return &r, nil
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "history", Arguments: json.RawMessage(`{"limit":2}`)}}
	res, err := tl.checkCalls(sdk)(context.Background(), "tools/call", req)
	r, _ := res.(*mcp.CallToolResult)
	if err != nil || r == nil || !r.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got != "the arguments of the history tool do not fit it: something new\\x1b[2J\nhint: the history tool takes agent and limit" {
		t.Errorf("%q", got)
	}
	if doc, _ := r.StructuredContent.(map[string]any); doc["error"].(map[string]string)["code"] != "usage" {
		t.Errorf("%v", r.StructuredContent)
	}
}
