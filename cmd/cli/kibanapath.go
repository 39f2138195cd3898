package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
)

// The paths a send to a Kibana agent takes (the record's and the --json
// document's "path").
const (
	// pathTask: message/send with configuration.blocking:false. Kibana
	// 9.6 and Serverless run it on Task Manager and answer with the task at
	// once; tasks/get follows it. Nothing about the connection can stop it.
	pathTask = "task"
	// pathBlocking: a blocking message/send whose answer is the reply; a
	// cut connection is recovered by reading the conversation. Kibana 9.2
	// to 9.5 keep running the run after a cut; 9.6 aborts it.
	pathBlocking = "blocking"
	// pathStream: message/stream, for a card that says it streams.
	pathStream = "stream"
)

// kibanaPath is how a send reaches a Kibana agent, decided by the release
// that answers (agent-builder.md §6, docs/design.md "Which Kibana
// answers"). Kibana 9.2 to 9.5 keep running a blocking message/send whose
// connection ends and store its round when it completes: a blocking send,
// recovered by reading the conversation, loses nothing. Kibana 9.6 and
// Serverless abort such a run and store nothing for failed runs: there
// only a blocking:false send survives a cut, so that is what is sent, and
// its task is followed with tasks/get.
type kibanaPath struct {
	// Server is what GET /api/status said; Known is false when it could
	// not be read (or named no release).
	Server client.ServerInfo
	Known  bool
	// NonBlocking sends configuration.blocking:false; Stream sends
	// message/stream.
	NonBlocking, Stream bool
	// Name is pathTask, pathBlocking or pathStream; "" when the release is
	// unknown and the server's answer decides: a Task is the task path, a
	// Message the blocking one (9.2 to 9.5 ignore blocking:false).
	Name string
	// Why says what decided, for doctor.
	Why string
}

// decideKibanaPath chooses the path for a release. override is the
// non_blocking setting (nil: the release decides) and source where it came
// from; cardStreams whether the agent's card says streaming.
func decideKibanaPath(info client.ServerInfo, known bool, override *bool, source string, cardStreams bool) kibanaPath {
	p := kibanaPath{Server: info, Known: known}
	aborts, placed := info.AbortsOnDisconnect()
	switch {
	case override != nil && *override && known && placed && !aborts:
		p.NonBlocking, p.Name = true, pathBlocking
		p.Why = "non_blocking is true (" + source + "), but this release ignores blocking:false and answers when the run ends: in effect a blocking send, a cut recovered by reading the conversation"
	case override != nil && *override:
		p.NonBlocking, p.Name = true, pathTask
		p.Why = "non_blocking is true (" + source + "): blocking:false, the task followed with tasks/get"
	case override != nil:
		p.Name = pathBlocking
		p.Why = "non_blocking is false (" + source + "): a blocking send"
		if known && placed && aborts {
			p.Why += "; this release stops the run when its connection is cut, times out or is interrupted, and the reply is then lost"
		}
	case !known || !placed:
		p.NonBlocking = true
		p.Why = "blocking:false, and the server's answer decides: a task followed with tasks/get (9.6, Serverless), or the reply when the run ends (9.2 to 9.5 ignore it)"
	case aborts:
		p.NonBlocking, p.Name = true, pathTask
		p.Why = "blocking:false, the task followed with tasks/get: a cut connection, a timeout or an interrupt does not stop the run (a blocking send would be aborted)"
	default:
		p.Name = pathBlocking
		p.Why = "a blocking send: the run goes on after a cut connection, and its reply is read from the conversation"
	}
	if !p.NonBlocking && cardStreams {
		p.Stream, p.Name = true, pathStream
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
	sum := sha256.Sum256([]byte("kibana status\x00" + targetOrigin(kibanaURL)))
	return "kibana-" + hex.EncodeToString(sum[:12])
}

// kibanaServer returns what the Kibana of s says it is, from the state
// directory while it is fresh, else from GET /api/status. known is false
// when the status could not be read.
func (a *App) kibanaServer(ctx context.Context, s *settings, k *client.Kibana, fresh bool) (client.ServerInfo, bool) {
	st, stErr := a.openStore()
	key := serverInfoKey(s.URL)
	if stErr == nil && !fresh {
		if raw, ok := st.LoadServerInfo(key); ok {
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
	if stErr == nil {
		d := serverInfoDoc{Number: info.Number, Flavor: info.Flavor, Unknown: !known}
		maxAge := serverInfoOldMaxAge
		if aborts, placed := info.AbortsOnDisconnect(); known && placed && aborts {
			maxAge = serverInfoNewMaxAge
		}
		if raw, err := json.Marshal(d); err == nil {
			st.SaveServerInfo(key, raw, maxAge)
		}
	}
	return info, known
}

func nonBlockingText(v *bool) string {
	switch {
	case v == nil:
		return "auto"
	case *v:
		return "true"
	}
	return "false"
}
