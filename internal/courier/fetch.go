package courier

import (
	"errors"

	"github.com/a2a-courier/a2a-courier/store"
)

// WriteFetched writes an outcome read from the server without a worker
// (fetch: its state, reply and reason, its task id into a record that has
// none) into the local record it was read for, when that may be written
// (FetchMayWrite) and, under its lock, the record is still the one that
// was read: the same message, still writable. A send may have put a new
// message in it meanwhile (queued, its text in it), or a worker finished
// it; a worker holding it is left to write it. It reports whether the
// record was written; an error is a write that failed.
func (c *Courier) WriteFetched(local, fetched *store.Record) (bool, error) {
	if c.Store == nil || !FetchMayWrite(local) {
		return false, nil
	}
	h, err := c.Store.Lock(local.ContextID)
	if err != nil {
		return false, nil
	}
	defer h.Release()
	_, err = h.Update(func(x *store.Record) error {
		if x.MessageID != local.MessageID || !FetchMayWrite(x) {
			return errRecordMoved
		}
		finish(x, c.now(), fetched.State)
		x.Reply, x.ReplyFile, x.ReplyBytes = fetched.Reply, fetched.ReplyFile, fetched.ReplyBytes
		x.Reason, x.Via, x.HTTPStatus = fetched.Reason, "fetch", 200
		if x.TaskID == "" {
			x.TaskID = fetched.TaskID
		}
		return nil
	})
	if errors.Is(err, errRecordMoved) {
		return false, nil
	}
	return err == nil, err
}

// FetchMayWrite reports whether an outcome read from the server may be
// written into a local record: one that is sent and not final, or
// expired. A queued record holds a message not sent yet (its text is in
// it): what the server shows is not its outcome.
func FetchMayWrite(local *store.Record) bool {
	return local != nil && local.State != store.Queued && (!local.State.Terminal() || local.State == store.Expired)
}

// errRecordMoved means a record changed between the read and the write.
var errRecordMoved = errors.New("the record changed while the server was read")
