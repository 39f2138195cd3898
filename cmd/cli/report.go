package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// This file is what a command reports: the exit codes and their table, the
// report of every kind of remote failure (exit code, --json code, hint),
// and the --json document of a task with how a record is printed.

// Exit codes. One table, never renumbered once released; exitCodeTable
// is its text.
const (
	ExitOK            = 0 // success: the final reply is on stdout
	ExitUnexpected    = 1 // unexpected error
	ExitUsage         = 2 // usage or configuration error
	ExitUnreachable   = 3 // server unreachable (DNS, refused, TLS), or the proxy is
	ExitAuth          = 4 // authentication or authorisation refused (401, 403)
	ExitNotFound      = 5 // not found (agent, conversation, context)
	ExitTaskFailed    = 6 // the remote task failed, was rejected or canceled, or is lost
	ExitInputRequired = 7 // the remote task needs input
	ExitStillRunning  = 8 // still running: the wait ran out; nothing is sent again
	ExitBusy          = 9 // server busy or rate-limited after bounded retries
)

// exitCodeTable is the exit code table as --help prints it. It is the
// source of truth: README.md's table says the same, word for word, and
// SKILL.md's has the same codes (TestExitCodeTablesAgree).
const exitCodeTable = `Exit codes:
  0  success: the final reply is on stdout
  1  unexpected error
  2  usage or configuration error (missing configuration prints the set-up
     steps)
  3  server unreachable (DNS, refused, TLS), or the proxy is (unreachable, or
     refuses the tunnel)
  4  authentication or authorisation refused (401, 403)
  5  not found (agent, conversation, context)
  6  the remote task failed, was rejected or canceled, or is lost (the agent
     can no longer show it), or cancel found it finished already
     (not_cancelable); the reason is printed. A request refused before
     anything ran exits with the code of the refusal: 2, 3, 4, 5 or 9 (1
     when the server failed or its answer was not understood)
  7  the remote task needs input (input-required, auth-required, awaiting
     prompt)
  8  still running: the wait ran out; the task is still followed and nothing
     is sent again; resume with the printed command (a note says when a
     failed run would leave no trace)
  9  server busy or rate-limited (429, 503) after bounded retries (a refused
     send is sent again at most 3 times, after the server's Retry-After,
     never after a wait that would leave less than 1s of --timeout); the
     hint and retry_after_seconds say how long the server asked to wait`

// kindReport is how one kind of remote failure is reported: its exit code,
// its --json code and its hint.
type kindReport struct {
	exit int
	code string
	hint nextstep.Text
	// refine, when set, adjusts the report for the HTTP status, the
	// JSON-RPC code or what was being done (Op).
	refine func(e *client.Error, r *kindReport)
}

// kindReports is the one table from a kind of remote failure to its report.
// A command's error (fromClientError) and a task the server refused
// (exitCodeFor of a rejected record) both come here, so the two always
// agree. TestEveryKindIsReported keeps a row for every kind.
var kindReports = map[client.Kind]kindReport{
	client.KindUnexpected: {exit: ExitUnexpected},
	client.KindUnreachable: {exit: ExitUnreachable, refine: refineProxy,
		hint: say("%s and that Kibana is up and reachable from this machine", nextstep.Check(nextstep.KibanaURL))},
	client.KindTLS: {exit: ExitUnreachable, refine: refineProxy,
		hint: plain("check the URL's scheme; for a private CA set A2A_COURIER_CA_CERT to its PEM bundle")},
	client.KindAuth: {exit: ExitAuth,
		hint: say("the API key was refused: %s (the \"encoded\" value of an Elasticsearch API key) and that it has not expired", nextstep.Check(nextstep.KibanaAPIKey))},
	client.KindForbidden: {exit: ExitAuth,
		hint: say("the API key lacks a privilege in the space: it needs Agent Builder read (feature_agentBuilder.read) there; %s", nextstep.Check(nextstep.KibanaSpace))},
	client.KindNotFound: {exit: ExitNotFound, refine: refineNotFound,
		hint: say("check the id; %s lists the agents of this space", nextstep.New("discover").Quoted())},
	// The request, as given, is one the server does not take.
	client.KindBadRequest: {exit: ExitUsage, refine: refineBadRequest},
	client.KindTooLarge: {exit: ExitUsage,
		hint: plain("the message is larger than the server accepts; shorten it")},
	client.KindBusy: {exit: ExitBusy, refine: refineBusy,
		hint: plain("the server is busy or rate limiting; try again later")},
	client.KindServer: {exit: ExitUnexpected, refine: refineServer,
		hint: plain("the server failed; try again, and check Kibana's logs if it persists")},
	client.KindConnection: {exit: ExitUnreachable, refine: refineConnection,
		hint: plain("the connection to the server broke; check the network and try again")},
	// An answer not understood.
	client.KindProtocol: {exit: ExitUnexpected, refine: refineProtocol,
		hint: say("the server's answer was not what Agent Builder sends; is %s the Kibana URL (not Elasticsearch)?", nextstep.KibanaURL)},
	// Every JSON-RPC error refuses the request as sent (bad params -32602,
	// an unknown method or a protocol version the agent does not speak
	// -32601 and -32009, an unsupported operation -32004, a task in a
	// terminal state, …), but those refineRPC names.
	client.KindRPC: {exit: ExitUsage, refine: refineRPC,
		hint: plain("the agent's A2A endpoint refused the request")},
	client.KindAgentFailed: {exit: ExitTaskFailed,
		hint: plain("the agent's run failed; sending again starts a new run")},
}

// reportOf is the report of a remote failure: its kind's row, refined.
func reportOf(e *client.Error) kindReport {
	r, ok := kindReports[e.Kind]
	if !ok {
		r = kindReports[client.KindUnexpected]
	}
	r.code = e.Kind.String()
	if r.refine != nil {
		r.refine(e, &r)
	}
	return r
}

func refineNotFound(e *client.Error, r *kindReport) {
	switch {
	case strings.Contains(e.Op, "conversation"):
		r.hint = say("check the id; %s lists the conversations of this space", nextstep.New("history").Quoted())
	case e.Op == "list agents":
		r.hint = say("Agent Builder is not enabled in this Kibana (9.2/9.3: Advanced Settings), or %s is not Kibana's address", nextstep.KibanaURL)
	}
}

func refineBadRequest(e *client.Error, r *kindReport) {
	switch {
	case strings.Contains(e.Message, "redirects in a loop"):
		r.code = "config"
		r.hint = say("%s (or the agent's URL): a login or SSO page in front of the server, or a proxy misconfigured, sends requests round in a loop", nextstep.Check(nextstep.KibanaURL))
	case strings.Contains(e.Message, "redirected away"):
		r.code = "config"
		r.hint = say("set %s to the address the server redirects to, if you trust it", nextstep.KibanaURL)
	case e.StatusCode == 501 || e.StatusCode == 505:
		r.hint = say("the server does not implement this request: is %s Kibana's address (not Elasticsearch's), with its base path if any?", nextstep.KibanaURL)
	case e.StatusCode != 0:
		r.hint = say("the server refused the request (HTTP %d): check the ids and values given; "+
			"if they are right, %s to check that %s is a Kibana with Agent Builder", e.StatusCode, nextstep.New("doctor").Run(), nextstep.KibanaURL)
	default:
		r.hint = plain("check the ids and values given")
	}
}

func refineBusy(e *client.Error, r *kindReport) {
	if e.RetryAfter > 0 {
		r.hint = say("the server asked to retry after %s", courier.WaitText(e.RetryAfter))
	}
}

func refineServer(e *client.Error, r *kindReport) {
	if e.StatusCode == 502 || e.StatusCode == 504 {
		r.exit = ExitUnreachable // a proxy got no answer from the server
		r.hint = plain("a proxy in front of Kibana could not get an answer from it; try again")
	}
}

// refineProxy: the proxy the environment names failed, not the server,
// or a proxy setting could not be read.
func refineProxy(e *client.Error, r *kindReport) {
	p := e.Proxy
	switch {
	case p == nil:
	case e.Kind == client.KindTLS && p.Host != "":
		r.hint = plain("the proxy's TLS certificate is not trusted: for a private CA set A2A_COURIER_CA_CERT to its PEM bundle (it covers the proxy too), or name the proxy with http://")
	case p.Unreadable != "":
		r.hint = plain(p.Unreadable + " does not parse as a URL, so Go did not use it as given: set it as http://host:port, with credentials as http://user:password@host:port (%-escape a space, @, : or % in them)")
	case p.Unread != "":
		r.hint = plain(p.Unread + " is set, but Go's HTTP client reads only HTTPS_PROXY (for https:// URLs) and HTTP_PROXY (for http://): set those to the proxy")
	case p.Status == http.StatusProxyAuthRequired && p.Credentials:
		r.hint = plain("the proxy refused the user and password of its URL in HTTPS_PROXY (HTTP_PROXY for http:// URLs): check them, %-escaped where they hold a space, @, : or %")
	case p.Status == http.StatusProxyAuthRequired && p.Host == "":
		r.hint = plain("a proxy that HTTPS_PROXY and HTTP_PROXY do not name stands in front of the server and asks for credentials; a2a-courier gives them only to the proxy named there (http://user:password@host:port)")
	case p.Status == http.StatusProxyAuthRequired:
		r.hint = plain("the proxy asks for credentials: give them in its URL, http://user:password@host:port in HTTPS_PROXY (HTTP_PROXY for http:// URLs)")
	case p.Status == http.StatusBadGateway, p.Status == http.StatusServiceUnavailable, p.Status == http.StatusGatewayTimeout:
		r.hint = plain("the proxy could not reach the server: check the server's URL, and that the proxy may reach it (or list the host in NO_PROXY)")
	case p.Status != 0:
		r.hint = plain("the proxy does not let this connection through; check its rules for the host, or list the host in NO_PROXY to reach it directly")
	default:
		r.hint = plain("check the proxy that HTTPS_PROXY (HTTP_PROXY for http:// URLs) names and that it is up; NO_PROXY lists the hosts reached without it")
	}
}

func refineConnection(e *client.Error, r *kindReport) {
	if errors.Is(e, context.DeadlineExceeded) {
		r.hint = say("no answer in time: raise %s, or check that the server is up", nextstep.Opt("--timeout"))
	}
}

func refineProtocol(e *client.Error, r *kindReport) {
	switch {
	case errors.Is(e, client.ErrReplyTooLarge):
		r.hint = plain("the answer is larger than a2a-courier reads (32 MiB for an answer, 256 MiB for a conversation); ask the agent for a shorter reply")
	case errors.Is(e, client.ErrOtherContext):
		r.hint = say("the agent's answer belongs to another conversation, so it is not taken as this one's reply; %s reads a task as the agent shows it", nextstep.New("fetch").Hole("--task", "taskId").Quoted())
	case errors.Is(e, client.ErrNestedTooDeep):
		r.hint = plain("the answer nests deeper than any real document does (1000 levels); the server or a proxy in front of it sends something else than JSON replies")
	}
}

func refineRPC(e *client.Error, r *kindReport) {
	switch e.RPCCode {
	case -32001: // TaskNotFoundError
		r.exit, r.code, r.hint = ExitNotFound, "not_found", plain("the agent does not know that task")
	case -32002: // TaskNotCancelableError: it has finished
		r.exit = ExitTaskFailed
	case -32603: // InternalError: the agent failed
		r.exit = ExitUnexpected
		r.hint = plain("the agent failed while handling the request; try again, and check the agent's logs if it persists")
	case -32009, -32601:
		r.code = "protocol_version"
		r.hint = plain("the agent does not speak this A2A version (" + map[int]string{-32009: "version not supported", -32601: "method not found"}[e.RPCCode] +
			"): check its card with get-card, and drop --protocol if you gave one")
	}
}

// exitFor is the exit code of a remote failure: its kind's, refined by the
// HTTP status and the JSON-RPC code.
func exitFor(kind client.Kind, status, rpcCode int) int {
	return reportOf(&client.Error{Kind: kind, StatusCode: status, RPCCode: rpcCode}).exit
}

// fromClientError reports a remote failure: its exit code, code and hint.
func fromClientError(e *client.Error) *cliError {
	if errors.Is(e, context.Canceled) || errors.Is(e, mcpserver.ErrServerStopping) {
		// The command's context ended: a signal (Ctrl-C, SIGTERM, a
		// hang-up), or the MCP server that ran it stopping; not the network.
		msg := "interrupted: " + e.Op + " did not finish"
		if errors.Is(e, mcpserver.ErrServerStopping) {
			msg += " (" + mcpserver.ErrServerStopping.Error() + ")"
		}
		return &cliError{exit: ExitUnexpected, code: "interrupted", err: e,
			message: msg, hint: plain("the command was stopped before the server answered; run it again")}
	}
	r := reportOf(e)
	out := &cliError{message: e.Error(), err: e, code: r.code, exit: r.exit, hint: r.hint}
	if e.Kind == client.KindBusy {
		out.retryAfter = e.RetryAfter
	}
	return out
}

// remoteHint rewrites the hints that speak of Kibana for an error met
// with a generic A2A agent (--url or a peer).
func remoteHint(ce *cliError) *cliError {
	hint := map[string]string{
		"unreachable": "check the agent's URL and that the agent is up and reachable from this machine",
		"auth": "the agent wants a credential it accepts: give it a token (A2A_COURIER_TOKEN with A2A_COURIER_TOKEN_ORIGIN, " +
			"--token-file, or the peer's token_env/token_file), or check that the one given has not expired",
		"forbidden": "the agent refused this credential the operation: check the token's rights on the agent",
		"not_found": "check the agent's URL (its card is read from /.well-known/agent-card.json, or agent.json for older agents; " +
			"get-card shows the endpoint the card names) and any task or context id given",
		"server_error": "the agent's server failed; try again, and check its logs if it persists",
		"protocol":     "the answer was not A2A JSON-RPC: check the agent's URL with get-card",
		"bad_request": "the agent refused the request: check the ids and values given, and the agent's URL and " +
			"protocol with get-card",
	}[ce.code]
	// Only hints that speak of Kibana are replaced: a hint written for
	// the case at hand stays.
	kibanaHint := ce.hint.IsZero()
	said := ce.hint.String()
	for _, w := range []string{"KIBANA_", "Kibana", "Agent Builder", "discover", "history", "API key"} {
		kibanaHint = kibanaHint || strings.Contains(said, w)
	}
	if hint == "" || !kibanaHint {
		return ce
	}
	out := *ce
	out.hint = plain(hint)
	return &out
}

// taskDoc is the --json document of send, send-async, result and fetch.
// Fields are only ever added.
type taskDoc struct {
	ContextID      string  `json:"context_id"`
	Agent          string  `json:"agent,omitempty"`
	State          string  `json:"state"`
	Reply          *string `json:"reply,omitempty"`
	ReplyTruncated bool    `json:"reply_truncated,omitempty"`
	ReplyChars     int     `json:"reply_chars,omitempty"`
	ReplyFile      string  `json:"reply_file,omitempty"`
	// Parts are the reply's parts apart (a generic agent's): json.md.
	Parts     []store.ReplyPart `json:"parts,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	Resume    string            `json:"resume,omitempty"`
	Answer    string            `json:"answer,omitempty"`
	LastError *errorDoc         `json:"last_error,omitempty"`
	TaskID    string            `json:"task_id,omitempty"`
	// Path is how a Kibana send went (task, blocking, stream), and
	// KibanaVersion and KibanaFlavor the release that decided it.
	Path          string `json:"path,omitempty"`
	KibanaVersion string `json:"kibana_version,omitempty"`
	KibanaFlavor  string `json:"kibana_build_flavor,omitempty"`
	// Note says how fetch chose the task when it had to choose, or that
	// the outcome it reports is the local record's.
	Note           string     `json:"note,omitempty"`
	ConversationID string     `json:"conversation_id,omitempty"`
	MessageID      string     `json:"message_id,omitempty"`
	CreatedAt      *time.Time `json:"created_at,omitempty"`
	FinishedAt     *time.Time `json:"finished_at,omitempty"`
	Error          *errorDoc  `json:"error,omitempty"`
	// resume and answer are Resume and Answer as steps: the command
	// renders them for its caller (App.caller), once.
	resume, answer nextstep.Step
}

// answerPlaceholder stands for the answer in commands shown to people; a
// message that is this text was pasted without being filled in.
const answerPlaceholder = "<your answer>"

// answerStep is the command that answers an agent's question, reading
// the answer from stdin ("-"): a document's command runs as it is, with no
// placeholder to fill in. asJSON adds --json (the command of a JSON
// document, read by programs).
func answerStep(rec *store.Record, asJSON bool) nextstep.Step {
	s := nextstep.New("send")
	switch {
	case rec.Target.Kind != store.TargetA2A:
		s = s.Pos(rec.Agent).Flag("--context", rec.ContextID)
	case rec.Target.Peer == "":
		s = s.Flag("--url", rec.Target.URL).Flag("--task", rec.TaskID)
	default:
		s = s.Pos(rec.Target.Peer).Flag("--task", rec.TaskID)
	}
	if asJSON {
		s = s.Bool("--json")
	}
	return s.ReadsStdin()
}

// resumeStep is the exact command that continues a task.
func resumeStep(rec *store.Record) nextstep.Step {
	if rec.Lost {
		return nextstep.Step{} // nothing reads it back
	}
	if rec.State == store.Expired {
		return fetchStep(rec.ContextID)
	}
	if !rec.State.Terminal() {
		return waitStep(rec.ContextID)
	}
	return nextstep.Step{}
}

// fetchStep reads a task's reply from the server.
func fetchStep(contextID string) nextstep.Step { return nextstep.New("fetch").Pos(contextID) }

// resultStep shows a task's outcome.
func resultStep(contextID string) nextstep.Step { return nextstep.New("result").Pos(contextID) }

// handOffErr is the error of a task recorded whose worker did not start:
// classified as err is (a state directory it cannot write, say), its
// message saying that result --wait starts one, as a step.
func handOffErr(contextID string, err error) *cliError {
	wrapped := fmt.Errorf("task %s is recorded but the background worker did not start: %w", contextID, err)
	ce := classify(wrapped)
	if ce.err == wrapped && ce.message == courier.OneLine(wrapped) {
		step := waitStep(contextID).Run()
		ce.said = say("%s (%s to retry)", ce.message, step)
		ce.message = nextstep.Caller{}.Text(ce.said)
	}
	return ce
}

// waitStep waits for a task's reply.
func waitStep(contextID string) nextstep.Step { return resultStep(contextID).Bool("--wait") }

// exitCodeFor maps a record's state (and, for rejected tasks, the reason
// they were rejected) to the exit code table.
func exitCodeFor(rec *store.Record) int {
	switch rec.State {
	case store.Completed:
		return ExitOK
	case store.InputRequired:
		return ExitInputRequired
	case store.Failed, store.Canceled:
		return ExitTaskFailed
	case store.Expired:
		if rec.Lost {
			// Not "still running" as far as anyone can tell: waiting
			// longer cannot help.
			return ExitTaskFailed
		}
	case store.Rejected:
		// Refused before anything ran: the code of the refusal, from the
		// one table errors share (a rejection an agent reported as its
		// task's state has no error: 6).
		if rec.Error != nil {
			return exitFor(courier.KindOf(rec.Error), rec.Error.HTTPStatus, rec.Error.RPCCode)
		}
		return ExitTaskFailed
	}
	return ExitStillRunning
}

// recordDoc turns a record into the output document.
func recordDoc(rec *store.Record) taskDoc {
	d := taskDoc{
		ContextID: rec.ContextID, Agent: rec.Agent, State: string(rec.State), Reason: rec.Reason,
		resume: resumeStep(rec), MessageID: rec.MessageID, FinishedAt: rec.FinishedAt,
	}
	d.Resume = d.resume.String()
	if rec.ContextID != "" && rec.Target.Kind != store.TargetA2A {
		// Only Agent Builder keeps a conversation under this id.
		d.ConversationID = client.ConversationIDForContext(rec.ContextID)
	}
	if created := rec.CreatedAt; !created.IsZero() {
		d.CreatedAt = &created
	}
	if rec.State == store.Completed || rec.State == store.InputRequired {
		reply := rec.Reply
		d.Reply, d.Parts = &reply, rec.ReplyParts
	}
	if rec.State == store.InputRequired {
		d.answer = answerStep(rec, true)
		d.Answer = d.answer.String()
	}
	d.TaskID = rec.TaskID
	d.Path, d.KibanaVersion, d.KibanaFlavor = rec.Path, rec.Target.KibanaVersion, rec.Target.KibanaFlavor
	if rec.LastError != nil && !rec.State.Terminal() {
		d.LastError = &errorDoc{Code: rec.LastError.Kind, Message: rec.LastError.Message, RetryAfterSeconds: rec.LastError.RetryAfterSeconds}
	}
	if code := exitCodeFor(rec); code != ExitOK && code != ExitStillRunning && code != ExitInputRequired {
		ce := recordError(rec)
		d.Error = &errorDoc{Code: ce.code, Message: ce.message, Hint: ce.hint.String(), hint: ce.hint, why: ce.why, RetryAfterSeconds: courier.WholeSeconds(ce.retryAfter)}
	}
	return d
}

// recordError describes a failed, rejected or canceled task.
func recordError(rec *store.Record) *cliError {
	ce := &cliError{exit: exitCodeFor(rec)}
	what := map[store.State]string{store.Failed: "failed", store.Rejected: "was not accepted", store.Canceled: "was canceled", store.Expired: "is lost"}[rec.State]
	ce.why = nonEmptyStr(rec.Reason, "no reason given")
	ce.message = fmt.Sprintf("task %s %s: %s", rec.ContextID, what, ce.why)
	ce.code = "task_" + string(rec.State)
	switch rec.State {
	case store.Failed:
		ce.hint = plain("the agent's run failed; sending again starts a new run")
		if rec.Target.Kind == store.TargetA2A {
			ce.hint = plain("the agent's task failed; sending again starts a new run")
		}
	case store.Rejected:
		if rec.Error != nil {
			ce.code = rec.Error.Kind
			ce.why = rec.Error.Message
			ce.message = fmt.Sprintf("task %s was not accepted: %s", rec.ContextID, ce.why)
			from := fromClientError(courier.ClientError(rec.Error))
			if rec.Target.Kind == store.TargetA2A {
				from = remoteHint(from)
			}
			ce.hint, ce.code = from.hint, from.code
			if courier.ClientError(rec.Error).Proxy != nil {
				ce.hint = ce.hint.Then("; nothing reached the server, so sending it again once the proxy lets it through is safe")
			}
		}
		if courier.KindOf(rec.Error) == client.KindBusy {
			ce.retryAfter = time.Duration(rec.Error.RetryAfterSeconds) * time.Second
			ce.hint = plain(busyHint(rec))
			// The reason says why it was not sent again (courier's
			// sendRetryWait).
			if why, ok := strings.CutPrefix(rec.Reason, rec.Error.Message+"; "); ok && why != "" {
				ce.why += "; not sent again: " + why
				ce.message += "; not sent again: " + why
			}
		}
		if ce.hint.IsZero() {
			ce.hint = plain("nothing ran on the server; it is safe to send again")
		}
	case store.Expired:
		ce.code = "task_lost"
		ce.hint = plain("the agent can no longer show this task, so its reply cannot be read back; sending again runs the whole task again: ask before doing so")
	case store.Canceled:
		canceledBy := rec.CanceledBy
		if canceledBy == "" && strings.HasPrefix(rec.Reason, "canceled on request") {
			canceledBy = "cancel" // a record of a build before canceled_by
		}
		switch {
		case canceledBy == "":
			ce.hint = plain("the agent stopped the run on its side; sending again starts a new run")
		case rec.SentAt == nil && rec.MessageID != "":
			// (A task canceled by its id alone has no record of its send.)
			ce.hint = plain("nothing was sent, so nothing ran; sending again is safe")
		case rec.Target.Kind != store.TargetA2A && !rec.Target.NonBlocking && courier.ReleaseAborts(rec.Target):
			ce.hint = plain("the run stopped with its connection; sending again starts a new run")
		case rec.Target.Kind != store.TargetA2A:
			ce.hint = say("a2a-courier stopped following it; Agent Builder may still finish the run: %s reads its reply", fetchStep(rec.ContextID).Quoted())
		default:
			ce.hint = plain("the task was canceled on request; sending again starts a new run")
		}
	}
	return ce
}

// busyHint says how long the server asked to wait, why the message was not
// sent again, and that it did not run (429, 503).
func busyHint(rec *store.Record) string {
	var b strings.Builder
	refused := "it refused the message for now (rate limit or overload)"
	if rec.Refusals > 1 {
		refused = fmt.Sprintf("it refused the message %d times in a row (rate limit or overload)", rec.Refusals)
	}
	secs := rec.Error.RetryAfterSeconds
	if secs <= 0 {
		b.WriteString("the server is busy or rate limiting: " + refused + " and nothing ran, so sending it again later is safe")
		return b.String()
	}
	// Why it was not sent again is the error's message (recordError).
	fmt.Fprintf(&b, "the server asked to retry after %s", courier.WaitText(time.Duration(secs)*time.Second))
	b.WriteString("; " + refused + " and nothing ran, so sending it again after that is safe")
	return b.String()
}

func nonEmptyStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// reporter prints the tasks a command reports: their --json documents,
// or for people their replies and states, with the commands that go on
// rendered for the caller (caller), and the hints of their errors naming
// the space they were sent to (settings.refusedTaskSpace).
type reporter struct {
	p       *Process
	printer func() *printer
	caller  func() nextstep.Caller
	set     *settings
	// view is how the command reads recorded tasks (the notes of those
	// read with the profile they were sent with, the settings in use).
	view *taskView
}

// reportRecord prints a record as the result of a command and returns the
// exit status as an error (nil for success).
func (rp *reporter) reportRecord(rec *store.Record, maxChars int, st *store.Store) error {
	return rp.reportRecordWith(rec, maxChars, st, docExtra{})
}

// docExtra is what fetch adds to a task's report.
type docExtra struct {
	// resume replaces the command that continues a task still running
	// (without a local record, result cannot).
	resume nextstep.Step
	// note says how the task was chosen (rendered for the caller).
	note nextstep.Text
	// waited says that Wait found the task done (courier.Done): a read
	// refused is then the answer even if its lock is taken since.
	waited bool
	// taskSpace says that the task is read in the space it was sent to
	// (kibanaForRecord's sameKibana): its hints name that space
	// (inTaskSpace), not the configured one.
	taskSpace bool
}

func (rp *reporter) reportRecordWith(rec *store.Record, maxChars int, st *store.Store, extra docExtra) error {
	pr := rp.printer()
	doc, code, refused, err := rp.taskDocument(rec, maxChars, st, extra)
	if err != nil {
		return err
	}
	if !extra.note.IsZero() && !pr.json {
		pr.info("%s", pr.say(extra.note))
	}
	switch {
	case pr.json:
		pr.writeJSON(doc)
	case refused != nil:
		pr.printError(refused)
	default:
		rp.printRecord(rec, doc, code, extra.taskSpace)
	}
	if werr := pr.outErr(); werr != nil {
		// The caller closed stdout: the task is not lost with it.
		return &cliError{exit: ExitUnexpected, code: "output", err: werr,
			message: fmt.Sprintf("the result of task %s (%s) could not be written to stdout: %v; its record keeps it", rec.ContextID, rec.State, werr),
			hint:    say("%s prints it again", resultStep(rec.ContextID).Quoted())}
	}
	return exitWith(code)
}

// taskDocument is a record's --json document as a command reports it (its
// reply cut as --max-chars and the reply's file say, its commands as the
// caller ran this one), its exit code, and, when nobody can read its reply
// with this credential, that error.
func (rp *reporter) taskDocument(rec *store.Record, maxChars int, st *store.Store, extra docExtra) (taskDoc, int, *cliError, error) {
	doc := recordDoc(rec)
	doc.Note = rp.withRecordNote(rec, rp.caller().Text(extra.note))
	if doc.Note == "" && courier.FailureLeavesNoTrace(rec) {
		// Not "nothing is lost": a failure of this run would never show.
		doc.Note = rp.caller().Text(courier.NoTraceNote(rec, rp.p.Now()))
	}
	if !extra.resume.IsZero() && !doc.resume.IsZero() {
		doc.resume = extra.resume
	}
	caller := rp.caller()
	doc.Resume, doc.Answer = caller.Resume(doc.resume), caller.Resume(doc.answer)
	if doc.Error != nil {
		doc.Error.Hint = caller.Text(rp.spaceOf(rec, doc.Error.hint, extra.taskSpace))
	}
	if rec.ReplyFile != "" && doc.Reply != nil {
		// A reply too large for the record: the output shows its start,
		// and the file its whole.
		limit := courier.SpilledReplyCut
		if maxChars > 0 && maxChars < limit {
			limit = maxChars
		}
		prefix, total, err := courier.ReadPrefix(rec.ReplyFile, limit)
		if err != nil {
			return doc, 0, nil, fmt.Errorf("read the reply of task %s: %w", rec.ContextID, err)
		}
		doc.Reply = &prefix
		if total > limit {
			cut := prefix + fmt.Sprintf("\n[… reply cut at %d of %d characters; the whole reply is in %s]", limit, total, rec.ReplyFile)
			doc.Reply = &cut
			doc.ReplyTruncated = true
		}
		doc.ReplyChars, doc.ReplyFile = total, rec.ReplyFile
	} else if doc.Reply != nil && maxChars > 0 {
		cut, file, total, err := courier.CutText("reply", *doc.Reply, maxChars, courier.ReplyName(rec), st)
		if err != nil {
			return doc, 0, nil, err
		}
		if file != "" {
			doc.Reply, doc.ReplyTruncated, doc.ReplyChars, doc.ReplyFile = &cut, true, total, file
		}
	}
	if doc.ReplyTruncated {
		doc.Parts = courier.CutPartTexts(doc.Parts) // the whole texts are in the file
	}
	if courier.ReadingRefused(rec) && (extra.waited || st == nil || !st.Locked(rec.ContextID)) {
		// Nobody can read the reply with this credential: "still running"
		// would have a caller wait for ever.
		ce := fromClientError(courier.ClientError(rec.LastError))
		ce.why = "reading the reply was refused: " + rec.LastError.Message
		ce.message = "reading the reply of task " + rec.ContextID + " was refused: " + rec.LastError.Message
		ce.hint = inTaskSpace(rec, ce.hint).Then("; once fixed, %s reads the reply", fetchStep(rec.ContextID).Quoted())
		doc.Error = &errorDoc{Code: ce.code, Message: ce.message, Hint: caller.Text(ce.hint), why: ce.why}
		return doc, ce.exit, ce, nil
	}
	return doc, exitCodeFor(rec), nil, nil
}

// withRecordNote is note after the one that says that rec is read with
// the profile it was sent with (recordSettings), when it is.
func (rp *reporter) withRecordNote(rec *store.Record, note string) string {
	switch rn := rp.view.notes[rec.ContextID]; {
	case rn == "":
		return note
	case note == "":
		return rn
	default:
		return rn + "; " + note
	}
}

// printRecord prints a record's outcome for people: the reply on stdout, or
// the state it is in, with the command that goes on, on stderr.
func (rp *reporter) printRecord(rec *store.Record, doc taskDoc, code int, taskSpace bool) {
	pr := rp.printer()
	switch {
	case rec.State == store.Completed:
		notes := courier.PartNotes(rec.ReplyParts)
		if *doc.Reply != "" {
			pr.payload(*doc.Reply)
		} else if len(notes) == 0 {
			pr.warn("the agent's reply is empty")
		}
		for _, n := range notes {
			pr.info("%s", n)
		}
		if pr.errTTY && rec.Agent != "" {
			// People see the handle on the conversation; programs have
			// --json, and a pipe stays clean.
			pr.info("context %s (continue with: %s)", rec.ContextID, nextstep.New("send").Words(sendTarget(rec.Agent, rec.Target)).Flag("--context", rec.ContextID))
		}
	case rec.State == store.InputRequired:
		if *doc.Reply != "" {
			pr.payload(*doc.Reply)
		}
		pr.info("the agent needs input before it can finish (context %s).", rec.ContextID)
		pr.info("answer with (the answer on stdin): %s", rp.caller().Resume(answerStep(rec, false)))
	case code == ExitStillRunning && rec.State == store.Expired:
		pr.info("%s (context %s).", nonEmptyStr(rec.Reason, "no reply within the maximum wait; the server may still finish"), rec.ContextID)
		pr.info("look again later: %s", doc.Resume)
	case code == ExitStillRunning && courier.RunLikelyAborted(rec):
		// non_blocking false on a release that aborts: the connection that
		// held the run is gone.
		pr.warn("%s has not answered, and its connection ended: this Kibana release stops a blocking run when that happens (non_blocking is false), so the reply will most likely never come (context %s).", rec.Agent, rec.ContextID)
		pr.info("a background worker still reads the conversation: %s", doc.Resume)
	case code == ExitStillRunning:
		said := ". Nothing is lost."
		if courier.FailureLeavesNoTrace(rec) {
			said = ": " + pr.say(courier.NoTraceNote(rec, rp.p.Now())) + "."
		}
		pr.info("still running: %s has not answered yet (context %s, state %s)%s", rec.Agent, rec.ContextID, rec.State, said)
		if rec.LastError != nil {
			if secs := rec.LastError.RetryAfterSeconds; secs > 0 {
				pr.info("last problem: %s (the server asked to retry after %s)", rec.LastError.Message, courier.WaitText(time.Duration(secs)*time.Second))
			} else {
				pr.info("last problem: %s", rec.LastError.Message)
			}
		}
		pr.info("resume with: %s", doc.Resume)
	default:
		ce := recordError(rec)
		ce.hint = rp.spaceOf(rec, ce.hint, taskSpace)
		pr.printError(ce)
	}
}

// spaceOf is hint about recorded task rec naming the space it was sent
// to: inTaskSpace when the command reads it there (taskSpace), else
// refusedTaskSpace.
func (rp *reporter) spaceOf(rec *store.Record, hint nextstep.Text, taskSpace bool) nextstep.Text {
	if taskSpace {
		return inTaskSpace(rec, hint)
	}
	return refusedTaskSpace(rec, hint, rp.view.inUse(rp.set.configured))
}

func exitWith(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code}
}

// stalledText says that a task is held by a worker that stopped beating.
func (rp *reporter) stalledText(rec *store.Record, w store.WorkerInfo) string {
	sent := "nothing has run yet"
	switch rec.State {
	case store.Queued:
	case store.Sending:
		// Stopped between writing "sending" and the answer: the request
		// may not have left; it leaves (once) when the worker goes on.
		sent = "the message may not have left yet; it leaves, once, when that worker goes on (" + courier.ContinueWorker(0) + ")"
	default:
		sent = "the message was sent, and is never sent again"
	}
	ago := rp.p.Now().Sub(w.LastBeat).Round(time.Second)
	return fmt.Sprintf("task %s is held by worker %d, which stopped responding: its last heartbeat was %s ago (state %s; %s)",
		rec.ContextID, w.PID, ago, rec.State, sent)
}

// reportStalled reports a task whose worker stopped beating, instead of
// "still running, nothing is lost": nobody works on it until that worker
// goes on or ends. Exit 8, as for any task not final.
func (rp *reporter) reportStalled(rec *store.Record, w store.WorkerInfo) error {
	pr := rp.printer()
	doc := recordDoc(rec)
	doc.Note, doc.Resume = rp.stalledText(rec, w), rp.caller().Resume(doc.resume)
	if pr.json {
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(ExitStillRunning)
	}
	pr.warn("%s", doc.Note)
	pr.info("it goes on if the worker is continued (%s); ended (%s), it frees the task for a new worker: %s", courier.ContinueWorker(w.PID), courier.EndWorker(w.PID), doc.Resume)
	return exitWith(ExitStillRunning)
}

// reportCanceled prints the outcome of a cancel: a task now canceled is
// what was asked for (exit 0); any other state is reported as it stands.
func (rp *reporter) reportCanceled(rec *store.Record, st *store.Store) error {
	if rec.State != store.Canceled {
		return rp.reportRecord(rec, 0, st)
	}
	pr := rp.printer()
	if pr.json {
		// What was asked for happened: no error object beside exit 0.
		d := recordDoc(rec)
		d.Error, d.Note = nil, rp.withRecordNote(rec, "")
		return pr.writeJSON(d)
	}
	pr.info("task %s canceled", nonEmptyStr(rec.ContextID, rec.TaskID))
	return nil
}
