package courier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// The paths a send to a Kibana agent takes (the record's and the --json
// document's "path").
const (
	// PathTask: message/send with configuration.blocking:false. Kibana
	// 9.6 and Serverless run it on Task Manager and answer with the task at
	// once; tasks/get follows it. Nothing about the connection can stop it.
	PathTask = "task"
	// PathBlocking: a blocking message/send whose answer is the reply; a
	// cut connection is recovered by reading the conversation. Kibana 9.2
	// to 9.5 keep running the run after a cut; 9.6 aborts it.
	PathBlocking = "blocking"
	// PathStream: message/stream, for a card that says it streams.
	PathStream = "stream"
)

// Path is how a send reaches a Kibana agent, decided by the release
// that answers (agent-builder.md §6, docs/design.md "Which Kibana
// answers"). Kibana 9.2 to 9.5 keep running a blocking message/send whose
// connection ends and store its round when it completes: a blocking send,
// recovered by reading the conversation, loses nothing. Kibana 9.6 and
// Serverless abort such a run and store nothing for failed runs: there
// only a blocking:false send survives a cut, so that is what is sent, and
// its task is followed with tasks/get.
type Path struct {
	// Server is what GET /api/status said; Known is false when it could
	// not be read (or named no release).
	Server client.ServerInfo
	Known  bool
	// NonBlocking sends configuration.blocking:false; Stream sends
	// message/stream.
	NonBlocking, Stream bool
	// Name is PathTask, PathBlocking or PathStream; "" when the release is
	// unknown and the server's answer decides: a Task is the task path, a
	// Message the blocking one (9.2 to 9.5 ignore blocking:false).
	Name string
	// Why says what decided, for doctor.
	Why string
}

// DecidePath chooses the path for a release. override is the
// non_blocking setting (nil: the release decides) and source where it came
// from; cardStreams whether the agent's card says streaming.
func DecidePath(info client.ServerInfo, known bool, override *bool, source string, cardStreams bool) Path {
	p := Path{Server: info, Known: known}
	aborts, placed := info.AbortsOnDisconnect()
	switch {
	case override != nil && *override && known && placed && !aborts:
		p.NonBlocking, p.Name = true, PathBlocking
		p.Why = "non_blocking is true (" + source + "), but this release ignores blocking:false and answers when the run ends: in effect a blocking send, a cut recovered by reading the conversation"
	case override != nil && *override:
		p.NonBlocking, p.Name = true, PathTask
		p.Why = "non_blocking is true (" + source + "): blocking:false, the task followed with tasks/get"
	case override != nil:
		p.Name = PathBlocking
		p.Why = "non_blocking is false (" + source + "): a blocking send"
		if known && placed && aborts {
			p.Why += "; this release stops the run when its connection is cut, times out or is interrupted, and the reply is then lost"
		}
	case !known || !placed:
		p.NonBlocking = true
		p.Why = "blocking:false, and the server's answer decides: a task followed with tasks/get (9.6, Serverless), or the reply when the run ends (9.2 to 9.5 ignore it)"
	case aborts:
		p.NonBlocking, p.Name = true, PathTask
		p.Why = "blocking:false, the task followed with tasks/get: a cut connection, a timeout or an interrupt does not stop the run (a blocking send would be aborted)"
	default:
		p.Name = PathBlocking
		p.Why = "a blocking send: the run goes on after a cut connection, and its reply is read from the conversation"
	}
	if !p.NonBlocking && cardStreams {
		p.Stream, p.Name = true, PathStream
	}
	return p
}

// Server facts are kept per Kibana (origin and base path). A newest
// release is kept a day: it does not go back. An older or unknown one is
// asked again after ten minutes, so that an upgrade to 9.6 is seen soon
// (until then the older path is used, which 9.6 aborts on a cut).
const (
	serverInfoNewMaxAge = 24 * time.Hour
	serverInfoOldMaxAge = 10 * time.Minute
	// serverInfoTimeout bounds the status read; a server that does not
	// answer in time is an unknown release (the safe path is then taken).
	serverInfoTimeout = 10 * time.Second
)

type serverInfoDoc struct {
	Number  string `json:"number,omitempty"`
	Flavor  string `json:"build_flavor,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
}

func serverInfoKey(kibanaURL string) string {
	sum := sha256.Sum256([]byte("kibana status\x00" + client.KibanaOrigin(kibanaURL)))
	return "kibana-" + hex.EncodeToString(sum[:12])
}

// KibanaServer returns what the Kibana at kibanaURL (k's) says it is, from
// the state directory while it is fresh, else from GET /api/status. known
// is false when the status could not be read.
func (c *Courier) KibanaServer(ctx context.Context, k *client.Kibana, kibanaURL string, fresh bool) (client.ServerInfo, bool) {
	key := serverInfoKey(kibanaURL)
	if c.Store != nil && !fresh {
		if raw, ok := c.Store.LoadServerInfo(key); ok {
			var d serverInfoDoc
			if json.Unmarshal(raw, &d) == nil {
				return client.ServerInfo{Number: d.Number, Flavor: d.Flavor}, !d.Unknown
			}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, serverInfoTimeout)
	defer cancel()
	info, err := k.Status(rctx)
	known := err == nil
	if ctx.Err() != nil {
		return info, known // interrupted: nothing learned worth keeping
	}
	if c.Store != nil {
		d := serverInfoDoc{Number: info.Number, Flavor: info.Flavor, Unknown: !known}
		maxAge := serverInfoOldMaxAge
		if aborts, placed := info.AbortsOnDisconnect(); known && placed && aborts {
			maxAge = serverInfoNewMaxAge
		}
		if raw, err := json.Marshal(d); err == nil {
			c.Store.SaveServerInfo(key, raw, maxAge)
		}
	}
	return info, known
}

// cardKey names a cached Kibana card: per origin, credential, space and
// agent, since what one key may see another may not.
func cardKey(kibanaURL string, key client.Secret, space, agent string) string {
	sum := sha256.Sum256([]byte(Fingerprint(client.KibanaOrigin(kibanaURL), key.Reveal()) + "\x00" + space + "\x00" + agent))
	return "kibana-" + hex.EncodeToString(sum[:12])
}

// KibanaCard returns an agent's card, from the state directory's cache
// while the server's max-age lasts, else from Kibana (k, the client of
// kibanaURL with key, in space). An agent Kibana does not know drops its
// cached card.
func (c *Courier) KibanaCard(ctx context.Context, k *client.Kibana, kibanaURL string, key client.Secret, space, agent string, fresh bool, timeout time.Duration) (client.Card, error) {
	ck := cardKey(kibanaURL, key, space, agent)
	if c.Store != nil && !fresh {
		if raw, ok := c.Store.LoadCard(ck); ok {
			return client.Card{Raw: raw}, nil
		}
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	card, err := k.AgentCard(rctx, agent)
	if err != nil {
		if c.Store != nil && client.IsKind(err, client.KindNotFound) {
			c.Store.ForgetCard(ck)
		}
		return client.Card{}, err
	}
	if c.Store != nil {
		c.Store.SaveCard(ck, card.Raw, card.MaxAge)
	}
	return card, nil
}

// forgetCard drops the cached card of a Kibana task's agent, when a run
// (the foreground send's or a worker's) learns that the card is stale:
//
//   - the card said streaming, and the server answered message/stream with
//     "streaming not supported" (-32004, EventStreamUnsupported): the
//     record's target stops streaming and the same delivery goes on by
//     message/send; the next send reads the card anew;
//   - the send was rejected not_found: the agent is gone, and a cached card
//     would let the next send record a task for it.
//
// KibanaCard drops it too when reading the card answers not found. Any
// other failure keeps the card until its max-age ends. Only Kibana cards
// are cached; a generic agent's card is read at every send, so there is
// none to forget.
func (c *Courier) forgetCard(rec *store.Record, key client.Secret) {
	if rec.Target.Kind == store.TargetKibana {
		c.Store.ForgetCard(cardKey(rec.Target.URL, key, rec.Target.Space, rec.Agent))
	}
}

// ReleaseAborts reports whether a Kibana task was sent to a release that
// aborts a blocking send or stream when its connection ends (9.6,
// Serverless), as far as its status said.
func ReleaseAborts(t store.Target) bool {
	aborts, known := client.ServerInfo{Number: t.KibanaVersion, Flavor: t.KibanaFlavor}.AbortsOnDisconnect()
	return t.Kind == store.TargetKibana && known && aborts
}

// RunLikelyAborted reports a Kibana task sent blocking to a release that
// aborts such a run with its connection, whose connection ended: its reply
// will most likely never come.
func RunLikelyAborted(x *store.Record) bool {
	return x.Target.Kind == store.TargetKibana && !x.Target.NonBlocking && x.ConnectionLost && ReleaseAborts(x.Target)
}

// FailureLeavesNoTrace reports a Kibana task still running on the blocking
// path of a release that keeps no failed run (9.2 to 9.5), whose connection
// ended (cut, or handed off): if its run fails, nothing will ever say so
// (the answer that would have is gone, and no round is stored), so the task
// is followed until its maximum wait and ends expired. "Nothing is lost"
// is not true of it.
func FailureLeavesNoTrace(x *store.Record) bool {
	aborts, known := client.ServerInfo{Number: x.Target.KibanaVersion, Flavor: x.Target.KibanaFlavor}.AbortsOnDisconnect()
	return x.Target.Kind == store.TargetKibana && !x.Target.NonBlocking && x.ConnectionLost && known && !aborts && !x.State.Terminal()
}

// NoTraceNote says what a task FailureLeavesNoTrace is for comes to: no
// reply yet, a failure would leave no trace, and how long it is followed
// (its --max-wait, from its send) before it ends expired: a text, as the
// flag is said to people and to the MCP server's tools otherwise.
func NoTraceNote(x *store.Record, now time.Time) nextstep.Text {
	left := x.Deadline().Sub(now)
	maxWait := WaitText(time.Duration(x.MaxWait))
	follow := nextstep.Say("it is followed for %s more (%s), then it ends expired", WaitText(max(left, 0)), nextstep.MaxWait(maxWait))
	if left <= 0 {
		follow = nextstep.Say("%s has run out: it ends expired at the next look", nextstep.ItsMaxWait(maxWait))
	}
	return nextstep.Say("no reply yet; on this release a failed run leaves no trace (Kibana %s stores no failed run, and the connection that would have carried its failure ended): %s",
		x.Target.KibanaVersion, follow)
}
