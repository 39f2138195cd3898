package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// Exit codes. One table, never renumbered once released; exitCodeTable
// is its text.
const (
	ExitOK            = 0 // success: the final reply is on stdout
	ExitUnexpected    = 1 // unexpected error
	ExitUsage         = 2 // usage or configuration error
	ExitUnreachable   = 3 // server unreachable (DNS, refused, TLS)
	ExitAuth          = 4 // authentication or authorisation refused (401, 403)
	ExitNotFound      = 5 // not found (agent, conversation, context)
	ExitTaskFailed    = 6 // the remote task failed, was rejected or canceled, or is lost
	ExitInputRequired = 7 // the remote task needs input
	ExitStillRunning  = 8 // still running: the wait ran out, nothing is lost
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
  3  server unreachable (DNS, refused, TLS)
  4  authentication or authorisation refused (401, 403)
  5  not found (agent, conversation, context)
  6  the remote task failed, was rejected or canceled, or is lost (the agent
     can no longer show it); the reason is printed. A request refused before
     anything ran exits with the code of the refusal: 2, 3, 4, 5 or 9 (1
     when the server failed or its answer was not understood)
  7  the remote task needs input (input-required, auth-required, awaiting
     prompt)
  8  still running: the wait ran out, nothing is lost, resume with the
     printed command
  9  server busy or rate-limited (429, 503) after bounded retries (a refused
     send is sent again at most 3 times, after the server's Retry-After,
     within --timeout); the hint and retry_after_seconds say how long the
     server asked to wait`

// cliError is an error with everything needed to report it: the exit code,
// a stable code for --json, a one-line message and a hint.
type cliError struct {
	exit    int
	code    string
	message string
	hint    string
	err     error
	// setup lists the set-up steps for --json when nothing is configured.
	setup []string
	// retryAfter is the wait a busy server asked for (Retry-After).
	retryAfter time.Duration
}

func (e *cliError) Error() string { return e.message }
func (e *cliError) Unwrap() error { return e.err }

func usageErr(hint, format string, args ...any) *cliError {
	return &cliError{exit: ExitUsage, code: "usage", message: fmt.Sprintf(format, args...), hint: hint}
}

func configErr(hint, format string, args ...any) *cliError {
	return &cliError{exit: ExitUsage, code: "config", message: fmt.Sprintf(format, args...), hint: hint}
}

// classify turns any error into a *cliError.
func classify(err error) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	var rerr *client.Error
	if errors.As(err, &rerr) {
		return fromClientError(rerr)
	}
	var unwritable *store.UnwritableError
	if errors.As(err, &unwritable) {
		return stateDirErr(err, unwritable)
	}
	var corrupt *store.CorruptError
	if errors.As(err, &corrupt) {
		return &cliError{exit: ExitUnexpected, code: "damaged_record", message: corrupt.Error(), err: err,
			hint: "move that file out of the state directory; other tasks are not affected"}
	}
	if errors.Is(err, context.Canceled) {
		return &cliError{exit: ExitUnexpected, code: "interrupted", message: "interrupted", err: err}
	}
	return &cliError{exit: ExitUnexpected, code: "unexpected", message: oneLineErr(err), err: err}
}

// remoteHint rewrites the hints that speak of Kibana for an error met
// with a generic A2A agent (--url or a peer).
func remoteHint(ce *cliError) *cliError {
	hint := map[string]string{
		"unreachable": "check the agent's URL and that the agent is up and reachable from this machine",
		"auth": "the agent wants a credential it accepts: give it a token (A2A_COURIER_TOKEN with A2A_COURIER_TOKEN_ORIGIN, " +
			"--token-file, or the peer's token_env/token_file), or check that the one given has not expired",
		"forbidden":    "the agent refused this credential the operation: check the token's rights on the agent",
		"not_found":    "check the agent's URL (get-card shows the endpoint its card names) and the task or context id",
		"server_error": "the agent's server failed; try again, and check its logs if it persists",
		"protocol":     "the answer was not A2A JSON-RPC: check the agent's URL with get-card",
		"bad_request": "the agent refused the request: check the ids and values given, and the agent's URL and " +
			"protocol with get-card",
	}[ce.code]
	// Only hints that speak of Kibana are replaced: a hint written for
	// the case at hand stays.
	kibanaHint := ce.hint == ""
	for _, w := range []string{"KIBANA_", "Kibana", "Agent Builder", "discover", "history", "API key"} {
		kibanaHint = kibanaHint || strings.Contains(ce.hint, w)
	}
	if hint == "" || !kibanaHint {
		return ce
	}
	out := *ce
	out.hint = hint
	return &out
}

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// exitFor is the one table from a remote failure to an exit code: its
// kind, refined by the HTTP status and the JSON-RPC code. A command's error
// (fromClientError) and a task the server refused (exitCodeFor of a
// rejected record) both come here, so the two always agree.
func exitFor(kind client.Kind, status, rpcCode int) int {
	switch kind {
	case client.KindUnreachable, client.KindTLS, client.KindConnection:
		return ExitUnreachable
	case client.KindAuth, client.KindForbidden:
		return ExitAuth
	case client.KindNotFound:
		return ExitNotFound
	case client.KindBadRequest, client.KindTooLarge:
		// The request, as given, is one the server does not take.
		return ExitUsage
	case client.KindBusy:
		return ExitBusy
	case client.KindServer:
		if status == 502 || status == 504 {
			return ExitUnreachable // a proxy got no answer from the server
		}
		return ExitUnexpected
	case client.KindRPC:
		switch rpcCode {
		case -32001: // TaskNotFoundError
			return ExitNotFound
		case -32002: // TaskNotCancelableError: it has finished
			return ExitTaskFailed
		case -32603: // InternalError: the agent failed
			return ExitUnexpected
		}
		// Every other JSON-RPC error refuses the request as sent: bad
		// params (-32602), an unknown method or a protocol version the
		// agent does not speak (-32601, -32009), an unsupported operation
		// (-32004), a task in a terminal state, …
		return ExitUsage
	case client.KindAgentFailed:
		return ExitTaskFailed
	}
	return ExitUnexpected // KindProtocol (an answer not understood) and KindUnexpected
}

// fromClientError maps a remote failure to an exit code, a code and a hint.
func fromClientError(e *client.Error) *cliError {
	if errors.Is(e, context.Canceled) {
		// The command's context ended: a signal (Ctrl-C, SIGTERM, a
		// hang-up), not the network.
		return &cliError{exit: ExitUnexpected, code: "interrupted", err: e,
			message: "interrupted: " + e.Op + " did not finish", hint: "the command was stopped before the server answered; run it again"}
	}
	out := &cliError{message: e.Error(), err: e, code: e.Kind.String(), exit: exitFor(e.Kind, e.StatusCode, e.RPCCode)}
	switch e.Kind {
	case client.KindUnreachable:
		out.hint = "check KIBANA_URL and that Kibana is up and reachable from this machine"
	case client.KindTLS:
		out.hint = "check the URL's scheme; for a private CA set A2A_COURIER_CA_CERT to its PEM bundle"
	case client.KindAuth:
		out.hint = "the API key was refused: check KIBANA_API_KEY (the \"encoded\" value of an Elasticsearch API key) and that it has not expired"
	case client.KindForbidden:
		out.hint = "the API key lacks a privilege or the space: it needs Agent Builder read (feature_agentBuilder.read) in this space"
	case client.KindNotFound:
		out.hint = "check the id; `a2a-courier discover` lists the agents of this space"
		switch {
		case strings.Contains(e.Op, "conversation"):
			out.hint = "check the id; `a2a-courier history` lists the conversations of this space"
		case e.Op == "list agents":
			out.hint = "Agent Builder is not enabled in this Kibana (9.2/9.3: Advanced Settings), or KIBANA_URL is not Kibana's address"
		}
	case client.KindTooLarge:
		out.hint = "the message is larger than the server accepts; shorten it"
	case client.KindBusy:
		out.hint = "the server is busy or rate limiting; try again later"
		out.retryAfter = e.RetryAfter
		if e.RetryAfter > 0 {
			out.hint = fmt.Sprintf("the server asked to retry after %s", waitText(e.RetryAfter))
		}
	case client.KindServer:
		out.hint = "the server failed; try again, and check Kibana's logs if it persists"
		if e.StatusCode == 502 || e.StatusCode == 504 {
			out.hint = "a proxy in front of Kibana could not get an answer from it; try again"
		}
	case client.KindConnection:
		out.hint = "the connection to the server broke; check the network and try again"
		if errors.Is(e, context.DeadlineExceeded) {
			out.hint = "no answer in time: raise --timeout, or check that the server is up"
		}
	case client.KindProtocol:
		out.hint = "the server's answer was not what Agent Builder sends; is KIBANA_URL the Kibana URL (not Elasticsearch)?"
		switch {
		case errors.Is(e, client.ErrReplyTooLarge):
			out.hint = "the answer is larger than a2a-courier reads (32 MiB for an answer, 256 MiB for a conversation); ask the agent for a shorter reply"
		case errors.Is(e, client.ErrNestedTooDeep):
			out.hint = "the answer nests deeper than any real document does (1000 levels); the server or a proxy in front of it sends something else than JSON replies"
		}
	case client.KindRPC:
		out.hint = "the agent's A2A endpoint refused the request"
		switch e.RPCCode {
		case -32001:
			out.code, out.hint = "not_found", "the agent does not know that task"
		case -32603:
			out.hint = "the agent failed while handling the request; try again, and check the agent's logs if it persists"
		case -32009, -32601:
			out.code = "protocol_version"
			out.hint = "the agent does not speak this A2A version (" + map[int]string{-32009: "version not supported", -32601: "method not found"}[e.RPCCode] +
				"): check its card with get-card, and drop --protocol if you gave one"
		}
	case client.KindAgentFailed:
		out.hint = "the agent's run failed; nothing was stored, so sending again starts a new run"
	case client.KindBadRequest:
		switch {
		case strings.Contains(e.Message, "redirects in a loop"):
			out.code = "config"
			out.hint = "check KIBANA_URL (or the agent's URL): a login or SSO page in front of the server, or a proxy misconfigured, sends requests round in a loop"
		case strings.Contains(e.Message, "redirected away"):
			out.code = "config"
			out.hint = "set KIBANA_URL to the address the server redirects to, if you trust it"
		case e.StatusCode == 501 || e.StatusCode == 505:
			out.hint = "the server does not implement this request: is KIBANA_URL Kibana's address (not Elasticsearch's), with its base path if any?"
		case e.StatusCode != 0:
			out.hint = fmt.Sprintf("the server refused the request (HTTP %d): check the ids and values given; "+
				"if they are right, run `a2a-courier doctor` to check that KIBANA_URL is a Kibana with Agent Builder", e.StatusCode)
		default:
			out.hint = "check the ids and values given"
		}
	}
	return out
}

// wholeSeconds rounds a wait up to whole seconds: a Retry-After given as a
// date is not a whole number of seconds away, and waiting less than asked
// would be refused again.
func wholeSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// waitText writes a wait the way people read it: 7s, 1.2s, 1m30s, 2m, 1h.
func waitText(d time.Duration) string {
	if d > 0 && d < time.Minute && d%time.Second != 0 {
		return d.Round(100 * time.Millisecond).String()
	}
	s := (time.Duration(wholeSeconds(d)) * time.Second).String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}
