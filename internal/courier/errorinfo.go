package courier

import (
	"errors"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// A record keeps a failure as a store.ErrorInfo, its kind by name (the
// store knows nothing of the client). The conversions both ways are here,
// and only here.

// errorInfo is the record's form of err: a *client.Error's kind, status
// and JSON-RPC code, and for a busy server the wait it asked for; any other
// error is unexpected. nil for nil.
func errorInfo(err error) *store.ErrorInfo {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		info := &store.ErrorInfo{Kind: ce.Kind.String(), Message: ce.Error(), HTTPStatus: ce.StatusCode, RPCCode: ce.RPCCode}
		if p := ce.Proxy; p != nil {
			info.Proxy = &store.ProxyInfo{Host: p.Host, Status: p.Status, Credentials: p.Credentials, Unreadable: p.Unreadable, Unread: p.Unread}
		}
		if ce.Kind == client.KindBusy {
			info.RetryAfterSeconds = WholeSeconds(ce.RetryAfter)
		}
		return info
	}
	return &store.ErrorInfo{Kind: client.KindUnexpected.String(), Message: OneLine(err)}
}

// KindOf is the kind a record's error names; KindUnexpected for a name no
// kind has, and for no error.
func KindOf(info *store.ErrorInfo) client.Kind {
	if info == nil {
		return client.KindUnexpected
	}
	k, _ := client.ParseKind(info.Kind)
	return k
}

// ClientError turns a record's error back into the client's, for the one
// table that reports errors whatever they came from. nil for nil.
func ClientError(info *store.ErrorInfo) *client.Error {
	if info == nil {
		return nil
	}
	ce := &client.Error{Kind: KindOf(info), StatusCode: info.HTTPStatus, RPCCode: info.RPCCode, Message: info.Message,
		RetryAfter: time.Duration(info.RetryAfterSeconds) * time.Second}
	if p := info.Proxy; p != nil {
		ce.Proxy = &client.ProxyProblem{Host: p.Host, Status: p.Status, Credentials: p.Credentials, Unreadable: p.Unreadable, Unread: p.Unread}
	}
	return ce
}

// ReadingRefused reports a task left unfinished because reading its reply
// was refused (401, 403).
func ReadingRefused(rec *store.Record) bool {
	return !rec.State.Terminal() && rec.LastError != nil && client.IsKind(ClientError(rec.LastError), client.KindAuth, client.KindForbidden)
}

// OneLine is an error's text on one line, its white space folded ("" for
// nil).
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// WholeSeconds rounds a wait up to whole seconds: a Retry-After given as a
// date is not a whole number of seconds away, and waiting less than asked
// would be refused again.
func WholeSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// WaitText writes a wait the way people read it: 7s, 1.2s, 1m30s, 2m, 1h.
func WaitText(d time.Duration) string {
	if d > 0 && d < time.Minute && d%time.Second != 0 {
		return d.Round(100 * time.Millisecond).String()
	}
	s := (time.Duration(WholeSeconds(d)) * time.Second).String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}
