package client

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The answer cap. One response is capped at MaxResponseBytes (32 MiB by
// default) as it is read; an answer is capped the same way however it
// comes: the chunks of a stream's artifacts and the final status message
// are summed, and so are the parts of a task read whole. An answer of more
// parts than MaxReplyParts is over the cap too, whatever its size. An
// answer over the cap is not an error of the run: its error wraps
// ErrReplyTooLarge and is Processed (the run happened); the delivery reads
// the task instead, and when that is over the cap too the answer cannot be
// read at all (the runner ends the task expired and lost).

// MaxReplyParts bounds the parts of one answer (and the artifacts of one
// task): every file part is a file saved, and the record lists every
// part.
const MaxReplyParts = 1000

// partOverhead is what a part counts toward the answer cap besides its
// content: what holding it costs, so that a stream of empty parts is
// bounded by the cap too.
const partOverhead = 64

// partBytes is what a part counts toward the answer cap.
func partBytes(p Part) int64 {
	return int64(partOverhead + len(p.Text) + len(p.Bytes) + len(p.Data) + len(p.URL) + len(p.Name) + len(p.MediaType) + len(p.Problem))
}

func partsBytes(parts []Part) int64 {
	n := int64(0)
	for _, p := range parts {
		n += partBytes(p)
	}
	return n
}

// errTooManyParts is an answer over the cap by its count of parts (or
// artifacts).
var errTooManyParts = fmt.Errorf("%w: more than %d parts", ErrReplyTooLarge, MaxReplyParts)

// answerOverCap is the error of an answer over the cap: what, when not
// "", says how ("more than 1000 parts"), and the cap is then the count's.
func answerOverCap(op string, max int64, what string) *Error {
	msg, err := fmt.Sprintf("the agent's answer comes to more than the %s cap", byteSize(max)), ErrReplyTooLarge
	if what != "" {
		msg, err = "the agent's answer has "+what+", more than a2a-courier reads", errTooManyParts
	}
	return &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Err: err, Processed: true,
		Message: msg + "; the server processed the request, but its answer was not kept"}
}

// checkAnswer refuses a message or a task read whole whose answer is over
// the cap: its parts (and its artifacts' parts) summed, or counted.
func checkAnswer(op string, ev *StreamEvent, max int64) error {
	parts, size := len(ev.Parts), partsBytes(ev.Parts)
	for _, a := range ev.Artifacts {
		parts += len(a.Parts)
		size += partsBytes(a.Parts) + int64(len(a.ID)+len(a.Name))
	}
	switch {
	case parts > MaxReplyParts:
		return answerOverCap(op, max, "more than "+fmt.Sprint(MaxReplyParts)+" parts")
	case len(ev.Artifacts) > MaxReplyParts:
		return answerOverCap(op, max, "more than "+fmt.Sprint(MaxReplyParts)+" artifacts")
	case size > max:
		return answerOverCap(op, max, "")
	}
	return nil
}

// clonePart copies the strings of a part out of the event they were read
// from: a part kept across events (an artifact's chunk) must not hold its
// whole event's text alive.
func clonePart(p Part) Part {
	p.Text, p.Name, p.MediaType, p.URL, p.Problem = strings.Clone(p.Text), strings.Clone(p.Name), strings.Clone(p.MediaType), strings.Clone(p.URL), strings.Clone(p.Problem)
	return p
}

// boundArtifactID keeps an artifact id of at most MaxPartName bytes, and
// names a longer one by its digest: ids are compared, never shown.
func boundArtifactID(id string) string {
	if len(id) <= MaxPartName {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ErrOtherContext means an answer (a Message or a Task, sent, streamed or
// read) names another contextId than the one the message was sent in: it
// is not this conversation's answer.
var ErrOtherContext = errors.New("the answer names another context")

// otherContext refuses an answer that names a context other than want
// (nil when want or got is "", or they are the same).
func otherContext(op, want, got string) error {
	if want == "" || got == "" || got == want {
		return nil
	}
	return &Error{Kind: KindProtocol, Op: op, StatusCode: 200, Err: ErrOtherContext, Processed: true,
		Message: fmt.Sprintf("the agent answered for context %q, not for the context %s the message was sent in", oneLine(got, 80), want)}
}

// CheckContext refuses a task or message read for contextID that names
// another context (ErrOtherContext); "" checks nothing.
func CheckContext(op, contextID string, r *SendResult) error {
	return otherContext(op, contextID, r.ContextID)
}

// statusParts are the parts of a task's status message, as read.
func statusParts(r *SendResult) []Part {
	var out []Part
	for _, p := range r.Parts {
		if p.Source == SourceStatus {
			out = append(out, p.Part)
		}
	}
	return out
}
