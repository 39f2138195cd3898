package cli

import (
	"strings"
	"testing"

	"github.com/a2a-courier/a2a-courier/internal/courier"
)

// The help of send and send-async says the rule of a refused message
// (429, 503 with Retry-After) as the code has it (internal/courier's
// retry.go, docs/design.md step 7): how many times it is sent again, after
// which wait, and never after one over the longest wait or that would
// leave less than a second of the time left. -v says where the requests
// a background worker makes are shown: in its log.
func TestHelpSaysWhatTheCodeDoes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		command string
		limit   string
	}{
		{"send", "of the time left (--timeout, and the task's --max-wait)"},
		{"send-async", "of the task's --max-wait"},
	} {
		r := newHarness(t, nil).run(tc.command, "--help")
		r.expect(t, ExitOK)
		help := strings.Join(strings.Fields(r.stdout), " ")
		for _, want := range []string{
			"again at most 3 times, each after the wait the server asks for (without one, about 1s, 2s, then 4s)",
			"but never after a wait over " + courier.WaitText(courier.MaxSendRetryWait) + ", nor one that would leave less than " +
				courier.WaitText(courier.SendRetryReserve) + " " + tc.limit,
			"the requests a background worker makes (send-async's, a send's handed over) go to the worker's log",
		} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not say %q", tc.command, want)
			}
		}
		if strings.Contains(help, "while that fits") {
			t.Errorf("%s --help still says the old rule", tc.command)
		}
	}
	if courier.MaxSendRetries != 3 || courier.SendRetryReserve.String() != "1s" {
		t.Errorf("the rule changed: %d retries, a reserve of %s; so must the help", courier.MaxSendRetries, courier.SendRetryReserve)
	}
}
