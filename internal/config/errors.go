package config

import (
	"fmt"
	"strings"

	"github.com/a2a-courier/a2a-courier/internal/nextstep"
)

// Error is a configuration the command cannot run with, and what to do
// about it. Every one is a usage or configuration error to the command
// line (exit 2).
type Error struct {
	// Code is the --json code: "config", or "not_configured" when nothing
	// names a Kibana and its key.
	Code    string
	Message string
	Hint    string
	// Said is Hint said per caller (nextstep.Caller), where its words
	// differ for the MCP server's tools; zero: Hint as it is.
	Said nextstep.Text
	// Setup lists the set-up steps, for not_configured.
	Setup []nextstep.Text
}

func (e *Error) Error() string { return e.Message }

func configErr(hint, format string, args ...any) *Error {
	return &Error{Code: "config", Message: fmt.Sprintf(format, args...), Hint: hint}
}

func oneLineErr(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
