package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// showOptions are show's dependencies, flags and argument.
type showOptions struct {
	Printer func() *printer
	Store   func() (*store.Store, error)
	// KibanaForRecord reads the conversation of a recorded task (or of
	// none) where it was sent, as the view says (which it may switch to
	// the profile the task was sent with); CallerWith is the caller for
	// that view.
	KibanaForRecord func(*store.Record, *taskView) (k *client.Kibana, space string, sameKibana bool, err error)
	CallerWith      func(*taskView) nextstep.Caller

	view taskView

	target    string
	round     int
	roundSet  bool
	allRounds bool
	maxChars  int
	timeout   time.Duration
	// redact hides the credential in a reply that echoes it.
	redact func(string) string
}

// newCmdShow builds show; runF, when not nil, runs in place of showRun (a
// test's, which gets the options as parsed).
func newCmdShow(f *Factory, runF func(context.Context, *showOptions) error) *cobra.Command {
	opts := &showOptions{Printer: f.Printer, Store: f.Store, KibanaForRecord: f.KibanaForRecord, CallerWith: f.CallerWith}
	cmd := &cobra.Command{
		Use:   "show <conversationId|contextId>",
		Short: "Print the final reply of a conversation; never reasoning or tool output",
		Long: `Print the final reply of one conversation: by default that of its last
round, with --round n that of round n (rounds count from 1), with
--all-rounds each round's input and reply. Reasoning, tool calls and tool
results are never printed, however large the conversation.

The argument is a conversation id (as history lists it) or the contextId
of a task (printed by send and send-async): a contextId X is read as the
conversation a2a-X, and an id without the a2a- prefix that is not found
that way is tried as it is (conversations started in Kibana's UI).

In text mode stdout carries only the reply and a newline. With
--all-rounds, each text follows a line "[round i of n: input]" or
"[round i of n: reply]". --max-chars n cuts each text at n characters and
ends it with a marker naming a private file in the state directory that
holds the whole text.

--json prints {"conversation_id","agent_id","title","round","reply",
"round_count"} (round is 1-based; "status" is the round's status when the
server gives one; "reply_truncated", "reply_chars" and "reply_file" appear
when the reply was cut). With --all-rounds: {"conversation_id","agent_id",
"title","round_count","rounds":[{"round","input","reply","status"}]}, with
"input_truncated", "input_chars" and "input_file" for a cut input.

Exit status: 0 with the reply; 5 when the conversation or the round does
not exist; 8 when the round is still in progress (or the conversation has
no round yet); 7 when the agent awaits an answer or a confirmation; 6 when
the round failed; 1 when a finished round holds no reply. With
--all-rounds the last round decides.`,
		Example: `  a2a-courier show "$(a2a-courier history --limit 1 | cut -f1)"
  ctx=3f6c2e1a-7b4d-4e2a-9c1f-5d8e6a2b4c10   # printed by send or send-async
  a2a-courier show "$ctx" --max-chars 4000
  a2a-courier show "$ctx" --round 1 --json
  a2a-courier show "$ctx" --all-rounds`,
		Args: exactArgs(1, "a conversation id (see `a2a-courier history`) or a contextId"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.target = args[0]
			opts.roundSet = cmd.Flags().Changed("round")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.round, "round", 0, "print the reply of this round (1 is the first; default: the last)")
	cmd.Flags().BoolVar(&opts.allRounds, "all-rounds", false, "print each round's input and final reply")
	cmd.Flags().IntVar(&opts.maxChars, "max-chars", 0, "cut the reply (with --all-rounds, each input and reply) at this many characters; the whole text is saved to a file named in the marker")
	cmd.Flags().DurationVar(&opts.timeout, "timeout", defaultReadTimeout, "how long to wait for the server")
	return cmd
}

// showDoc is the --json document of show. Fields are only ever added.
type showDoc struct {
	ConversationID string  `json:"conversation_id"`
	AgentID        string  `json:"agent_id,omitempty"`
	Title          string  `json:"title,omitempty"`
	Round          int     `json:"round"`
	Reply          *string `json:"reply,omitempty"`
	ReplyTruncated bool    `json:"reply_truncated,omitempty"`
	ReplyChars     int     `json:"reply_chars,omitempty"`
	ReplyFile      string  `json:"reply_file,omitempty"`
	Status         string  `json:"status,omitempty"`
	RoundCount     int     `json:"round_count"`
	Reason         string  `json:"reason,omitempty"`
	Resume         string  `json:"resume,omitempty"`
	// Note says that the task is read with the profile it was sent with.
	Note string `json:"note,omitempty"`
}

// showAllDoc is the --json document of show --all-rounds.
type showAllDoc struct {
	ConversationID string         `json:"conversation_id"`
	AgentID        string         `json:"agent_id,omitempty"`
	Title          string         `json:"title,omitempty"`
	RoundCount     int            `json:"round_count"`
	Rounds         []showRoundDoc `json:"rounds"`
	Note           string         `json:"note,omitempty"`
}

type showRoundDoc struct {
	Round          int     `json:"round"`
	Input          string  `json:"input"`
	InputTruncated bool    `json:"input_truncated,omitempty"`
	InputChars     int     `json:"input_chars,omitempty"`
	InputFile      string  `json:"input_file,omitempty"`
	Reply          *string `json:"reply,omitempty"`
	ReplyTruncated bool    `json:"reply_truncated,omitempty"`
	ReplyChars     int     `json:"reply_chars,omitempty"`
	ReplyFile      string  `json:"reply_file,omitempty"`
	Status         string  `json:"status,omitempty"`
	// Interruption is "failed" or "aborted" for a run that did not
	// complete (Kibana's newest rounds), with its reason.
	Interruption       string `json:"interruption,omitempty"`
	InterruptionReason string `json:"interruption_reason,omitempty"`
}

func showRun(ctx context.Context, opts *showOptions) (err error) {
	defer func() { err = inView(&opts.view, err) }()
	if err := client.CheckID("conversation id or contextId", opts.target); err != nil {
		return usageErrSay(say("pass a conversation id listed by %s, or a contextId printed by send", nextstep.New("history").Quoted()), "%s", err.Error())
	}
	switch {
	case opts.roundSet && opts.allRounds:
		return usageSaid(plain("use one of them"), say("%s and %s exclude each other", nextstep.Opt("--round"), nextstep.Opt("--all-rounds")))
	case opts.roundSet && opts.round < 1:
		return usageSaid(say("rounds count from 1; leave %s out for the last round", nextstep.Opt("--round")), say("%s must be 1 or more", nextstep.Opt("--round")))
	case opts.maxChars < 0:
		return usageSaid(plain("use a positive number, or 0 for the whole reply"), say("%s must not be negative", nextstep.Opt("--max-chars")))
	}
	// A task of this machine: show reads Kibana's conversations, which
	// hold nothing of a generic agent's task or of a first round still
	// running.
	local := opts.localRecord()
	if local != nil && local.Target.Kind == store.TargetA2A {
		return usageErrSay(say("%s shows it", resultStep(local.ContextID).Quoted()),
			"show reads Agent Builder conversations; task %s went to a generic A2A agent", local.ContextID)
	}
	k, space, sameKibana, err := opts.KibanaForRecord(local, &opts.view)
	if err != nil {
		return err
	}
	if sameKibana {
		defer func() { err = inTaskSpaceErr(local, err) }()
	}
	opts.redact = k.RedactText
	var st *store.Store
	if opts.maxChars > 0 {
		if st, err = opts.Store(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	conv, convID, err := findConversation(ctx, k, opts.target, space)
	if err != nil {
		if local != nil && (!local.State.Terminal() || local.State == store.Expired) && classify(err).exit == ExitNotFound {
			return opts.notYetStored(local)
		}
		return err
	}
	if opts.allRounds {
		return opts.allRoundsOf(conv, convID, st)
	}
	return opts.roundOf(conv, convID, st)
}

// printer is the command line's printer, rendering for the view of the
// task show reads (caller).
func (opts *showOptions) printer() *printer { return opts.Printer().withCaller(opts.caller) }

// caller is the command line's caller, as the view of the task show reads
// has it (with the profile the task was sent with).
func (opts *showOptions) caller() nextstep.Caller { return opts.CallerWith(&opts.view) }

// note is the note of the recorded task show reads with the profile it
// was sent with, or "".
func (opts *showOptions) note() string {
	for _, n := range opts.view.notes {
		return n
	}
	return ""
}

// localRecord is this machine's record of the contextId shown (or
// a2a-<contextId>), or nil.
func (opts *showOptions) localRecord() *store.Record {
	ctxID := strings.TrimPrefix(opts.target, "a2a-")
	if client.CheckID("contextId", ctxID) != nil {
		return nil
	}
	st, err := opts.Store()
	if err != nil {
		return nil
	}
	rec, err := st.Load(ctxID)
	if err != nil {
		return nil
	}
	return rec
}

// notYetStored reports a task this machine sent whose conversation
// Kibana has not stored yet: it is running, not missing.
func (opts *showOptions) notYetStored(rec *store.Record) error {
	convID := client.ConversationIDForContext(rec.ContextID)
	doc := showDoc{ConversationID: convID, AgentID: rec.Agent, RoundCount: 0, Status: roundRunning,
		Reason: fmt.Sprintf("task %s is still %s: Kibana stores its conversation once the first round completes", rec.ContextID, rec.State),
		Resume: opts.caller().Resume(resumeStep(rec))}
	if rec.State == store.Expired {
		doc.Reason = fmt.Sprintf("task %s had no reply within the maximum wait, and Kibana has stored no conversation for it yet", rec.ContextID)
	}
	pr := opts.printer()
	if pr.json {
		doc.Note = opts.note()
		pr.writeJSON(doc)
	} else {
		pr.info("%s; look again later: %s", doc.Reason, doc.Resume)
	}
	return exitWith(ExitStillRunning)
}

// findConversation reads the conversation the argument names: a2a-<arg>
// first (the argument is a contextId), then the argument itself.
func findConversation(ctx context.Context, k *client.Kibana, target, space string) (*client.Conversation, string, error) {
	var candidates []string
	if !strings.HasPrefix(target, "a2a-") && client.ValidID(client.ConversationIDForContext(target)) {
		candidates = append(candidates, client.ConversationIDForContext(target))
	}
	candidates = append(candidates, target)
	for _, id := range candidates {
		conv, err := k.GetConversation(ctx, id)
		if client.IsKind(err, client.KindNotFound) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return conv, id, nil
	}
	msg := "conversation " + target + " not found in space " + space
	if len(candidates) > 1 {
		msg = fmt.Sprintf("conversation not found in space %s: neither %s (contextId %s) nor %s exists", space, candidates[0], target, target)
	}
	return nil, "", &cliError{exit: ExitNotFound, code: "not_found", message: msg,
		hint: say("%s lists your conversations in this space; Kibana stores a conversation only once its first round completes, and only for the API key's user", nextstep.New("history").Quoted())}
}

// Round states as show reports them.
const (
	roundDone     = "completed"
	roundRunning  = "in_progress"
	roundAwaiting = "awaiting_prompt"
	roundFailed   = "failed"
	roundNoReply  = "no_reply"
)

// roundState reads a round's status and whether it holds a reply. Kibana
// 9.2 and 9.3 store only finished rounds, without a status; later versions
// add in_progress and awaiting_prompt, and newer ones record failed runs.
func roundState(r client.Round) string {
	if r.Interruption != "" {
		// Kibana's newest rounds keep a failed or aborted run as a round
		// with status completed and an empty response.
		return roundFailed
	}
	switch r.Status {
	case "in_progress":
		return roundRunning
	case "awaiting_prompt":
		return roundAwaiting
	case "failed", "error", "aborted", "canceled", "cancelled":
		return roundFailed
	}
	if r.HasResponse {
		return roundDone
	}
	return roundNoReply
}

// roundReply is what a round has to show: its reply, or for a round
// awaiting a prompt the question (Kibana keeps it in pending_prompts and
// leaves the reply empty).
func roundReply(r client.Round, state string) string {
	if state == roundAwaiting && r.Prompt != "" {
		return r.Prompt
	}
	return r.Response
}

// roundFailure says how a failed round ended: "failed: <reason>", "was
// aborted", or "failed (status <s>)".
func roundFailure(r client.Round) string {
	switch r.Interruption {
	case "aborted":
		return "was aborted"
	case "":
		return "failed (status " + r.Status + ")"
	}
	return "failed: " + nonEmptyStr(r.InterruptionReason, "no reason given")
}

func roundExit(state string) int {
	switch state {
	case roundDone:
		return ExitOK
	case roundRunning:
		return ExitStillRunning
	case roundAwaiting:
		return ExitInputRequired
	case roundFailed:
		return ExitTaskFailed
	}
	return ExitUnexpected
}

func showStep(convID string, round int) nextstep.Step {
	s := nextstep.New("show").Pos(convID)
	if round > 0 {
		s = s.Flag("--round", strconv.Itoa(round))
	}
	return s
}

// roundOf prints the round --round names (the last by default).
func (opts *showOptions) roundOf(conv *client.Conversation, convID string, st *store.Store) error {
	pr := opts.printer()
	idx := -1
	if opts.roundSet {
		idx = opts.round - 1
	}
	r, n, ok := conv.PickRound(idx)
	if !ok && n > 0 {
		hint := say("use %[1]s 1 to %[2]d, or leave %[1]s out for the last round", nextstep.Opt("--round"), n)
		if n == 1 {
			hint = say("the conversation has 1 round: leave %[1]s out (or use %[1]s 1) to show it", nextstep.Opt("--round"))
		}
		return &cliError{exit: ExitNotFound, code: "not_found",
			message: fmt.Sprintf("conversation %s has %s; there is no round %d", convID, plural(n, "round"), opts.round),
			hint:    hint}
	}
	if !ok {
		reason := noRoundYet(convID)
		if pr.json {
			pr.writeJSON(showDoc{ConversationID: convID, RoundCount: 0, Status: roundRunning, Reason: pr.say(reason), Resume: opts.caller().Resume(showStep(convID, 0)), Note: opts.note()})
			return exitWith(ExitStillRunning)
		}
		pr.info("%s; look again later: %s", reason, showStep(convID, 0))
		return exitWith(ExitStillRunning)
	}
	number := r.Index + 1
	resumeRound := 0
	if opts.roundSet {
		resumeRound = number
	}
	state := roundState(r)
	doc := showDoc{ConversationID: convID, AgentID: conv.AgentID(), Title: conv.Title(), Round: number, Status: r.Status, RoundCount: n}
	switch state {
	case roundFailed:
		return &cliError{exit: ExitTaskFailed, code: "round_failed",
			message: fmt.Sprintf("round %d of conversation %s %s and holds no reply", number, convID, roundFailure(r)),
			hint:    plain("a failed run keeps no reply; sending the message again starts a new run")}
	case roundNoReply:
		return &cliError{exit: ExitUnexpected, code: "no_reply",
			message: fmt.Sprintf("round %d of conversation %s holds no reply (status %s)", number, convID, nonEmptyStr(r.Status, "none")),
			hint:    plain("the server stored the round without a final reply; open the conversation in Kibana to see what happened")}
	case roundRunning:
		doc.Reason = fmt.Sprintf("round %d of conversation %s is still in progress: no reply yet", number, convID)
		doc.Resume = opts.caller().Resume(showStep(convID, resumeRound))
		if pr.json {
			doc.Note = opts.note()
			pr.writeJSON(doc)
		} else {
			pr.info("%s; look again later: %s", doc.Reason, doc.Resume)
		}
		return exitWith(ExitStillRunning)
	}
	reply := opts.redact(roundReply(r, state))
	cut, file, total, err := courier.CutText("reply", reply, opts.maxChars, roundFileName(convID, number, ""), st)
	if err != nil {
		return err
	}
	doc.Reply = &cut
	if file != "" {
		doc.ReplyTruncated, doc.ReplyChars, doc.ReplyFile = true, total, file
	}
	code := roundExit(state)
	answered := state == roundAwaiting && number < n
	if answered {
		// A prompt a later round answered: nothing waits for an answer.
		code = ExitOK
		doc.Reason = fmt.Sprintf("the agent asked this, and round %d answered it", number+1)
	}
	if pr.json {
		doc.Note = opts.note()
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(code)
	}
	switch {
	case cut != "":
		pr.payload(cut)
	case state == roundDone:
		pr.warn("the agent's reply is empty")
	}
	switch {
	case answered:
		pr.info("%s", doc.Reason)
	case state == roundAwaiting:
		opts.awaitingHint(conv, convID, number)
	}
	return exitWith(code)
}

// awaitingHint tells a person how to answer an agent that waits for input.
func (opts *showOptions) awaitingHint(conv *client.Conversation, convID string, number int) {
	pr := opts.printer()
	pr.info("the agent awaits an answer or a confirmation (round %d of conversation %s).", number, convID)
	if ctxID, ok := strings.CutPrefix(convID, "a2a-"); ok {
		pr.info("answer in the same conversation (the answer on stdin): %s", nextstep.New("send").Pos(conv.AgentID()).Flag("--context", ctxID).ReadsStdin())
	}
}

// allRoundsOf prints each round's input and reply (--all-rounds).
func (opts *showOptions) allRoundsOf(conv *client.Conversation, convID string, st *store.Store) error {
	pr := opts.printer()
	doc := showAllDoc{ConversationID: convID, AgentID: conv.AgentID(), Title: conv.Title(), Rounds: []showRoundDoc{}}
	var cutErr error
	var states, failures []string
	lastState := ""
	n := conv.EachRound(func(r client.Round) bool {
		number := r.Index + 1
		rd := showRoundDoc{Round: number, Status: r.Status, Interruption: r.Interruption, InterruptionReason: r.InterruptionReason}
		state := roundState(r)
		lastState = state
		states = append(states, state)
		failures = append(failures, roundFailure(r))
		var err error
		var file string
		var total int
		if rd.Input, file, total, err = courier.CutText("input", r.Input, opts.maxChars, roundFileName(convID, number, ".input"), st); err != nil {
			cutErr = err
			return false
		}
		if file != "" {
			rd.InputTruncated, rd.InputChars, rd.InputFile = true, total, file
		}
		if state == roundDone || state == roundAwaiting {
			var reply string
			if reply, file, total, err = courier.CutText("reply", opts.redact(roundReply(r, state)), opts.maxChars, roundFileName(convID, number, ""), st); err != nil {
				cutErr = err
				return false
			}
			rd.Reply = &reply
			if file != "" {
				rd.ReplyTruncated, rd.ReplyChars, rd.ReplyFile = true, total, file
			}
		}
		doc.Rounds = append(doc.Rounds, rd)
		return true
	})
	if cutErr != nil {
		return cutErr
	}
	doc.RoundCount = n
	code := roundExit(lastState)
	if n == 0 {
		code = ExitStillRunning
	}
	if pr.json {
		doc.Note = opts.note()
		if err := pr.writeJSON(doc); err != nil {
			return err
		}
		return exitWith(code)
	}
	for i, rd := range doc.Rounds {
		pr.payload(fmt.Sprintf("[round %d of %d: input]", rd.Round, n))
		pr.payload(rd.Input)
		switch states[i] {
		case roundDone:
			pr.payload(fmt.Sprintf("[round %d of %d: reply]", rd.Round, n))
			pr.payload(*rd.Reply)
		case roundAwaiting:
			pr.payload(fmt.Sprintf("[round %d of %d: reply, awaiting an answer or a confirmation]", rd.Round, n))
			pr.payload(*rd.Reply)
		case roundRunning:
			pr.payload(fmt.Sprintf("[round %d of %d: no reply yet, still in progress]", rd.Round, n))
		case roundFailed:
			pr.payload(fmt.Sprintf("[round %d of %d: no reply, the run %s]", rd.Round, n, failures[i]))
		default:
			pr.payload(fmt.Sprintf("[round %d of %d: no reply stored (status %s)]", rd.Round, n, nonEmptyStr(rd.Status, "none")))
		}
	}
	switch {
	case n == 0:
		pr.info("%s; look again later: %s", noRoundYet(convID), showStep(convID, 0).Bool("--all-rounds"))
	case lastState == roundRunning:
		pr.info("the last round is still in progress; look again later: %s", showStep(convID, 0).Bool("--all-rounds"))
	case lastState == roundAwaiting:
		opts.awaitingHint(conv, convID, n)
	}
	return exitWith(code)
}

// roundFileName names the file that keeps a cut text of one round, a name
// store.WriteReply accepts however long the conversation id is.
// noRoundYet says what a conversation without a round may be: a first run
// still going, or one that failed (Kibana 9.6 makes the conversation when a
// run starts and keeps no round of a run that fails).
func noRoundYet(convID string) nextstep.Text {
	why := say("conversation %s has no round yet: its first run may still be going, or it failed (Kibana 9.6 keeps no round of a failed run)", convID)
	if ctxID, ok := strings.CutPrefix(convID, "a2a-"); ok && store.CheckContextID(ctxID) == nil {
		why = why.Then("; %s tells which, on the machine that sent it", resultStep(ctxID))
	}
	return why
}

func roundFileName(convID string, round int, suffix string) string {
	name := fmt.Sprintf("%s.round-%d%s", convID, round, suffix)
	if store.CheckContextID(name) != nil {
		sum := sha256.Sum256([]byte(convID))
		name = fmt.Sprintf("conversation-%s.round-%d%s", hex.EncodeToString(sum[:8]), round, suffix)
	}
	return name
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
