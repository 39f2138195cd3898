package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/internal/config"
	"github.com/a2a-courier/a2a-courier/internal/courier"
	"github.com/a2a-courier/a2a-courier/internal/nextstep"
	"github.com/a2a-courier/a2a-courier/store"
)

// cliError is an error with everything needed to report it: the exit code,
// a stable code for --json, a one-line message and a hint.
type cliError struct {
	exit    int
	code    string
	message string
	hint    nextstep.Text
	err     error
	// setup lists the set-up steps for --json when nothing is configured.
	setup []nextstep.Text
	// retryAfter is the wait a busy server asked for (Retry-After).
	retryAfter time.Duration
	// said is the message as a text, when it names flags or steps: it is
	// rendered for the caller where printed (message is it for people).
	said nextstep.Text
	// why is the message of a task's error without its subject ("task X
	// failed: "), for a line that names the task already.
	why string
}

func (e *cliError) Error() string { return e.message }
func (e *cliError) Unwrap() error { return e.err }

func usageErr(hint, format string, args ...any) *cliError {
	return usageErrSay(plain(hint), format, args...)
}

// usageErrSay is usageErr whose hint names commands or settings.
func usageErrSay(hint nextstep.Text, format string, args ...any) *cliError {
	return &cliError{exit: ExitUsage, code: "usage", message: fmt.Sprintf(format, args...), hint: hint}
}

// usageSaid is a usage error whose message names flags (nextstep.Opt):
// message is said to people, said to the caller where printed.
func usageSaid(hint, message nextstep.Text) *cliError {
	return &cliError{exit: ExitUsage, code: "usage", message: message.String(), said: message, hint: hint}
}

func configErr(hint, format string, args ...any) *cliError {
	return configErrSay(plain(hint), format, args...)
}

// configErrSay is configErr whose hint names flags or steps.
func configErrSay(hint nextstep.Text, format string, args ...any) *cliError {
	return &cliError{exit: ExitUsage, code: "config", message: fmt.Sprintf(format, args...), hint: hint}
}

// say is a hint or a message that names commands (nextstep.Step) or
// settings (nextstep.Check): they are rendered for the caller where it
// is printed.
func say(format string, args ...any) nextstep.Text { return nextstep.Say(format, args...) }

// plain is a hint that names no command nor setting.
func plain(s string) nextstep.Text { return nextstep.Plain(s) }

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
	var in *courier.InputError
	if errors.As(err, &in) {
		return &cliError{exit: ExitUsage, code: "usage", message: in.Error(), said: in.Message, hint: in.Hint}
	}
	var cfg *config.Error
	if errors.As(err, &cfg) {
		hint := cfg.Said
		if hint.IsZero() {
			hint = plain(cfg.Hint)
		}
		return &cliError{exit: ExitUsage, code: cfg.Code, message: cfg.Message, hint: hint, setup: cfg.Setup, err: err}
	}
	var unwritable *store.UnwritableError
	if errors.As(err, &unwritable) {
		return stateDirErr(err, unwritable)
	}
	var corrupt *store.CorruptError
	if errors.As(err, &corrupt) {
		return &cliError{exit: ExitUnexpected, code: "damaged_record", message: corrupt.Error(), err: err,
			hint: plain("move that file out of the state directory; other tasks are not affected")}
	}
	if errors.Is(err, context.Canceled) {
		return &cliError{exit: ExitUnexpected, code: "interrupted", message: "interrupted", err: err}
	}
	return &cliError{exit: ExitUnexpected, code: "unexpected", message: courier.OneLine(err), err: err}
}

// commandOf is the command of a command line: its first word but for the
// flags before it (the MCP server's connection flags, each with its value).
func commandOf(args []string) string {
	for i := 0; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			return args[i]
		}
		if !strings.Contains(args[i], "=") {
			i++
		}
	}
	return "fetch"
}
