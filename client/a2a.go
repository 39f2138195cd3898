package client

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// SendResult is what message/send answered: either a Message (the final
// reply) or a Task to follow.
type SendResult struct {
	// Kind is "message" or "task".
	Kind      string
	Text      string // the text parts of the message, or of the task's status message and artifacts
	ContextID string
	TaskID    string
	MessageID string
	// State is the task state as sent ("working", "completed", …); empty for a Message.
	State string
	// Timestamp is the task status's timestamp, as sent.
	Timestamp string
	// Parts are the answer's parts: a Message's (SourceMessage), or a
	// task's artifacts' (SourceArtifact, in order, chunks joined) then its
	// status message's (SourceStatus). Kibana's message/send answers carry
	// none.
	Parts []ReplyPart
	// StatusText is the text of a task's status message, and ArtifactText
	// that of its artifacts (one artifact a line). Text is, for a
	// completed task, the whole answer of the two (see Outcome.Reply);
	// for a task in another state, StatusText.
	StatusText   string
	ArtifactText string
}

// Outcome maps the result to an outcome as a delivery does: a Message is
// the final reply; a task's state gives the outcome (its artifacts and its
// status message, as the reply, the question or the reason). ok is false
// while the task is still going.
func (r *SendResult) Outcome() (Outcome, bool) {
	return r.outcome("task")
}

func (r *SendResult) outcome(via string) (Outcome, bool) {
	if r.Kind == "message" {
		if via == "task" {
			via = "reply"
		}
		return Outcome{State: StateCompleted, Reply: r.Text, Via: via, HTTPStatus: 200, TaskID: r.TaskID, Parts: r.Parts}, true
	}
	o, ok := taskOutcome(r.State, r.Text, via, r.TaskID)
	if ok {
		o.Parts = r.Parts
	}
	return o, ok
}

// withArtifacts returns r with the artifacts of acc (chunks a stream
// brought) in place of its own, for a task read without them.
func (r *SendResult) withArtifacts(acc *artifacts) *SendResult {
	out := *r
	var status []ReplyPart
	for _, p := range r.Parts {
		if p.Source == SourceStatus {
			status = append(status, p)
		}
	}
	out.ArtifactText = acc.String()
	out.Parts = append(acc.replyParts(), status...)
	if out.State == "completed" {
		out.Text = composeAnswer(out.ArtifactText, out.StatusText)
	}
	return &out
}

// AgentErrorPrefix starts the text of a reply that reports an agent failure
// on Kibana: the executor catches the failure and answers an ordinary
// Message "Error: <reason>".
const AgentErrorPrefix = "Error: "

// LooksLikeAgentError reports whether a Message reply has the form Kibana
// uses for a failed run. Callers confirm against the conversation store,
// since an agent may legitimately begin a reply with these words.
func (r *SendResult) LooksLikeAgentError() bool {
	return r.Kind == "message" && strings.HasPrefix(r.Text, AgentErrorPrefix)
}

type jsonrpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type v03Part struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

type v03Message struct {
	Kind      string    `json:"kind"`
	Role      string    `json:"role"`
	MessageID string    `json:"messageId"`
	ContextID string    `json:"contextId,omitempty"`
	Parts     []v03Part `json:"parts"`
}

type v03SendParams struct {
	Message       v03Message `json:"message"`
	Configuration struct {
		Blocking bool `json:"blocking"`
	} `json:"configuration"`
}

// encodeSendV03 builds a message/send request. It never sets a taskId: on
// Kibana a taskId names a task that its per-request store cannot find.
func encodeSendV03(m OutgoingMessage) ([]byte, string, error) {
	p := v03SendParams{Message: v03Message{
		Kind: "message", Role: "user", MessageID: m.MessageID, ContextID: m.ContextID,
		Parts: []v03Part{{Kind: "text", Text: m.Text}},
	}}
	p.Configuration.Blocking = m.Blocking
	// A taskId is never sent to Kibana: its per-request store cannot find
	// one (OutgoingMessage.TaskID is for generic agents).
	id := uuid.NewString()
	b, err := json.Marshal(jsonrpcRequest{JSONRPC: "2.0", ID: id, Method: "message/send", Params: p})
	return b, id, err
}

func decodeSendV03(op string, resp *response, reqID string) (*SendResult, error) {
	s := unsafeString(resp.body)
	if e := gjson.Get(s, "error"); e.Exists() && e.Type != gjson.Null {
		return nil, rpcError(op, resp.status, e)
	}
	res := gjson.Get(s, "result")
	if !res.IsObject() {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the JSON-RPC response has neither result nor error", Processed: true}
	}
	if id := gjson.Get(s, "id"); id.Exists() && id.Type != gjson.Null && id.String() != reqID {
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the JSON-RPC response answers another request id", Processed: true}
	}
	out := &SendResult{
		Kind:      res.Get("kind").String(),
		ContextID: res.Get("contextId").String(),
	}
	switch out.Kind {
	case "message":
		out.MessageID = res.Get("messageId").String()
		out.TaskID = res.Get("taskId").String()
		out.Text = textParts(res.Get("parts"))
	case "task":
		out.TaskID = res.Get("id").String()
		out.State = res.Get("status.state").String()
		out.Text = textParts(res.Get("status.message.parts"))
		if arts := artifactText(res.Get("artifacts")); arts != "" {
			out.Text = arts
		}
	default:
		return nil, &Error{Kind: KindProtocol, Op: op, StatusCode: resp.status, Message: "the result is neither a message nor a task", Processed: true}
	}
	return out, nil
}

func rpcError(op string, status int, e gjson.Result) *Error {
	code := int(e.Get("code").Int())
	msg := e.Get("message").String()
	if msg == "" {
		msg = "no message"
	}
	return &Error{Kind: KindRPC, Op: op, StatusCode: status, RPCCode: code, Message: oneLine(msg, 300), Reason: errorInfoReason(e)}
}

// errorInfoReason is the reason of the google.rpc.ErrorInfo in an error
// object's data (v1.0 JSON-RPC) or details (google.rpc.Status), or "".
func errorInfoReason(e gjson.Result) string {
	reason := ""
	for _, key := range []string{"data", "details"} {
		d := e.Get(key)
		if d.IsObject() {
			d = gjson.Parse("[" + d.Raw + "]")
		}
		d.ForEach(func(_, x gjson.Result) bool {
			if r := x.Get("reason"); r.Type == gjson.String && r.Str != "" {
				reason = oneLine(r.Str, 100)
				return false
			}
			return true
		})
		if reason != "" {
			break
		}
	}
	return reason
}

// taskNotFound reports an answer that says the server does not know the
// task: JSON-RPC -32001 (TaskNotFoundError), or an error whose ErrorInfo
// reason is TASK_NOT_FOUND (v1.0), whatever HTTP status carried it. Any
// other error, a bare HTTP 404 included (a wrong route or a proxy), says
// nothing about the task.
func taskNotFound(err error) bool {
	var ce *Error
	if !errors.As(err, &ce) {
		return false
	}
	return ce.RPCCode == -32001 || ce.Reason == "TASK_NOT_FOUND"
}

// textParts joins the text of the text parts of a part list.
func textParts(parts gjson.Result) string {
	var texts []string
	parts.ForEach(func(_, p gjson.Result) bool {
		kind := p.Get("kind").String()
		if kind == "" {
			kind = p.Get("type").String()
		}
		if t := p.Get("text"); t.Exists() && (kind == "text" || kind == "") {
			texts = append(texts, t.String())
		}
		return true
	})
	return strings.Join(texts, "\n")
}

func artifactText(arts gjson.Result) string {
	var texts []string
	arts.ForEach(func(_, a gjson.Result) bool {
		if t := textParts(a.Get("parts")); t != "" {
			texts = append(texts, t)
		}
		return true
	})
	return strings.Join(texts, "\n")
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
