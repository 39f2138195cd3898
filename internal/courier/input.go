package courier

import (
	"context"
	"errors"
	"fmt"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxMessageBytes bounds a message read from stdin; Kibana itself refuses
// request bodies over 1 MiB by default.
const MaxMessageBytes = 4 << 20

// ErrReadInterrupted means ctx ended while the message was read: nothing
// was sent.
var ErrReadInterrupted = errors.New("interrupted while reading the message; nothing was sent")

// ReadMessage reads a message from r (stdin), at most MaxMessageBytes,
// and checks it as CheckText does; it returns ErrReadInterrupted when ctx
// ends first (a read of a terminal cannot be stopped otherwise).
func ReadMessage(ctx context.Context, r io.Reader) (string, error) {
	type read struct {
		b   []byte
		err error
	}
	ch := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, MaxMessageBytes+1))
		ch <- read{b, err}
	}()
	select {
	case <-ctx.Done():
		return "", ErrReadInterrupted
	case rd := <-ch:
		switch {
		case rd.err != nil:
			return "", fmt.Errorf("read the message from stdin: %w", rd.err)
		case len(rd.b) > MaxMessageBytes:
			return "", &InputError{Message: nextstep.Plain(fmt.Sprintf("the message on stdin is larger than %d MiB", MaxMessageBytes>>20)), Hint: nextstep.Plain("shorten the message")}
		}
		return CheckText(string(rd.b))
	}
}

// ErrEmptyMessage is CheckText's error for a message with no text (an
// *InputError): a message of files or data alone may have none.
var ErrEmptyMessage error = &InputError{Message: nextstep.Plain("the message is empty"), Hint: nextstep.Plain("pass the text as an argument, or pipe it on stdin")}

// CheckText trims a message and checks it: not empty, and valid UTF-8 (the
// server stores what it receives, and the reply is matched by the text's
// hash). Errors are *InputError.
func CheckText(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", ErrEmptyMessage
	}
	if !utf8.ValidString(text) {
		return "", &InputError{Message: nextstep.Plain("the message is not valid UTF-8 text"), Hint: nextstep.Plain("convert it first, e.g. iconv -f latin1 -t utf-8")}
	}
	return text, nil
}
