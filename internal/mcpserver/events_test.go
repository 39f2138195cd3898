package mcpserver_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/internal/mcpserver"
)

// The server learns a call's contextId and status updates from the
// command's Events, never from its stderr: a runner that tells them (and
// prints a different wording, or a fake "task … started" line, on
// stderr) gets notifications with what it told, and none with what it
// printed. (Before the Events, the server read "task X started" and
// "progress:" lines from stderr: the told values were not seen.)
func TestProgressComesFromEventsNotStderr(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	o := mcpserver.Options{ProgressEvery: 20 * time.Millisecond, Run: func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, ev mcpserver.Events) int {
		io.WriteString(stderr, "task printed-id started; its reply: a2a-courier result printed-id --wait\nprogress: working: printed status\n")
		ev.Started("told-id")
		ev.Progress("working: told status")
		<-release
		io.WriteString(stdout, `{"context_id":"told-id","state":"completed","reply":"done"}`)
		return 0
	}}
	s := connect(t, o)
	done := make(chan string, 1)
	go func() {
		_, _, text := s.call("send", map[string]any{"agent": "a", "message": "m"})
		done <- text
	}()
	waitUntil(t, "a notification with what the command told", 10*time.Second, func() bool {
		return slices.ContainsFunc(s.progress(), func(m string) bool {
			return strings.HasPrefix(m, "send: waiting") && strings.HasSuffix(m, "(context told-id); latest status: working: told status")
		})
	})
	close(release)
	if text := <-done; text != "done" {
		t.Errorf("text %q", text)
	}
	for _, m := range s.progress() {
		if strings.Contains(m, "printed") {
			t.Errorf("a notification read stderr: %q", m)
		}
	}
}
