package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// ServerInfo is what Kibana's GET /api/status says about the release that
// answers: the version and the build flavor ("traditional" for a
// self-managed or Cloud Hosted Kibana, "serverless" for Elastic Cloud
// Serverless, which runs Kibana's newest code whatever its number says).
type ServerInfo struct {
	// Number is version.number, e.g. "9.6.0".
	Number string `json:"number"`
	// Flavor is version.build_flavor ("" on releases that do not send it).
	Flavor string `json:"build_flavor,omitempty"`
}

// Serverless reports whether the answer came from Elastic Cloud Serverless.
func (i ServerInfo) Serverless() bool { return strings.EqualFold(i.Flavor, "serverless") }

// MajorMinor returns the release line of Number (9, 6 for "9.6.0"); ok is
// false when Number does not start with two dot-separated integers.
func (i ServerInfo) MajorMinor() (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimSpace(i.Number), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

// AbortsOnDisconnect reports whether this Kibana runs the A2A adapter that
// aborts a blocking message/send (and any message/stream) when its HTTP
// request ends, and stores nothing for failed or aborted runs: Serverless,
// and 9.6 or later (agent-builder.md §6). known is false when the answer
// names no release this rule can place.
func (i ServerInfo) AbortsOnDisconnect() (aborts, known bool) {
	if i.Serverless() {
		return true, true
	}
	major, minor, ok := i.MajorMinor()
	if !ok {
		return false, false
	}
	return major > 9 || major == 9 && minor >= 6, true
}

// String names the release for people: "9.6.0", "serverless (9.7.0)".
func (i ServerInfo) String() string {
	switch {
	case i.Serverless() && i.Number != "":
		return "serverless (" + i.Number + ")"
	case i.Serverless():
		return "serverless"
	case i.Number == "":
		return "unknown"
	}
	return i.Number
}

// Status reads GET /api/status (at the Kibana origin and base path, outside
// any space): the version and build flavor of the Kibana that answers.
// Kibana answers it to any authenticated caller; an error means the
// release is unknown, and the caller decides from what the server does.
func (k *Kibana) Status(ctx context.Context) (ServerInfo, error) {
	const op = "read Kibana's status"
	resp, err := k.t.do(ctx, &request{op: op, method: http.MethodGet, path: "/api/status", idempotent: true, maxBody: 4 << 20})
	if err != nil {
		return ServerInfo{}, err
	}
	v := gjson.GetBytes(resp.body, "version")
	info := ServerInfo{Number: strings.Clone(v.Get("number").String()), Flavor: strings.Clone(v.Get("build_flavor").String())}
	if info.Number == "" && !info.Serverless() {
		// An anonymous (redacted) answer has only the overall level.
		return ServerInfo{}, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the status names no version", Processed: true}
	}
	return info, nil
}

// MovesUpdatedAt reports whether this release moves a conversation's
// updated_at on every round it stores, so that the conversation list tells
// which conversations have a new round: 9.4 and later (the agent_builder
// converter), and Serverless. The onechat-era converter of 9.2 and 9.3
// wrote updatedAt instead, and updated_at kept its first value; an unknown
// release is taken for one of those.
func (i ServerInfo) MovesUpdatedAt() bool {
	if i.Serverless() {
		return true
	}
	major, minor, ok := i.MajorMinor()
	return ok && (major > 9 || major == 9 && minor >= 4)
}
