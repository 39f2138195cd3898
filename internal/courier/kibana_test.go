package courier

import (
	"strings"
	"testing"
	"time"

	"github.com/a2a-courier/a2a-courier/client"
)

// DecidePath: the release decides, non_blocking overrides both ways, and a
// card that streams makes a blocking send a stream.
func TestDecidePath(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	v95 := client.ServerInfo{Number: "9.5.1"}
	v96 := client.ServerInfo{Number: "9.6.0"}
	serverless := client.ServerInfo{Number: "9.7.0", Flavor: "serverless"}
	for _, tt := range []struct {
		name        string
		info        client.ServerInfo
		known       bool
		override    *bool
		streams     bool
		path        string
		nonBlocking bool
	}{
		{"9.5", v95, true, nil, false, PathBlocking, false},
		{"9.5 streaming card", v95, true, nil, true, PathStream, false},
		{"9.6", v96, true, nil, false, PathTask, true},
		{"9.6 streaming card", v96, true, nil, true, PathTask, true},
		{"serverless", serverless, true, nil, false, PathTask, true},
		{"unknown release: the answer decides", client.ServerInfo{}, false, nil, false, "", true},
		{"9.5, non_blocking true", v95, true, &yes, false, PathBlocking, true},
		{"9.6, non_blocking false", v96, true, &no, false, PathBlocking, false},
		{"unknown, non_blocking true", client.ServerInfo{}, false, &yes, false, PathTask, true},
	} {
		p := DecidePath(tt.info, tt.known, tt.override, "env", tt.streams)
		if p.Name != tt.path || p.NonBlocking != tt.nonBlocking || p.Why == "" {
			t.Errorf("%s: %+v", tt.name, p)
		}
	}
	if p := DecidePath(v96, true, &no, "file", false); !strings.Contains(p.Why, "the reply is then lost") {
		t.Errorf("9.6 blocking: %q", p.Why)
	}
}

// sendRetryWait: the server's wait when it gave one, else a backoff; never
// beyond the retries, a minute, or the time left.
func TestSendRetryWait(t *testing.T) {
	t.Parallel()
	now := time.Now()
	busy := func(ra time.Duration) error {
		return &client.Error{Kind: client.KindBusy, StatusCode: 429, RetryAfter: ra}
	}
	if d, why := sendRetryWait(busy(7*time.Second), 1, now, now.Add(time.Minute), true, "--timeout"); d != 7*time.Second || why != "" {
		t.Errorf("Retry-After 7s: %s %q", d, why)
	}
	if d, why := sendRetryWait(busy(0), 2, now, time.Time{}, false, "--timeout"); d < 1600*time.Millisecond || d > 2400*time.Millisecond || why != "" {
		t.Errorf("backoff of the second try: %s %q", d, why)
	}
	// A wait that leaves exactly the reserve is waited.
	if d, why := sendRetryWait(busy(2*time.Second), 1, now, now.Add(3*time.Second), true, "--timeout"); d != 2*time.Second || why != "" {
		t.Errorf("Retry-After 2s with 3s left: %s %q", d, why)
	}
	for _, tt := range []struct {
		name string
		err  error
		n    int
		left time.Duration
		want string
	}{
		{"used up", busy(time.Second), MaxSendRetries + 1, time.Hour, "refused 4 times in a row"},
		{"longer than a send waits", busy(2 * time.Minute), 1, time.Hour, "longer than the 1m a send waits"},
		{"longer than the time left", busy(30 * time.Second), 1, 10 * time.Second, "the server asked to retry after 30s, longer than the 10s left of --timeout"},
		{"leaves less than the reserve", busy(2 * time.Second), 1, 2999 * time.Millisecond, "the server asked to retry after 2s, which would leave less than 1s of --timeout (2.9s left)"},
		{"a backoff longer than the time left", busy(0), 1, 500 * time.Millisecond, ", longer than the 500ms left of --timeout"},
		{"a backoff that leaves too little", busy(0), 1, 1500 * time.Millisecond, "which would leave less than 1s of --timeout (1.5s left)"},
		{"the time left rounded down", busy(50 * time.Second), 1, 50*time.Second + 990*time.Millisecond, "which would leave less than 1s of --timeout (50.9s left)"},
		{"a minute left, rounded down", busy(time.Minute), 1, time.Minute + 900*time.Millisecond, "which would leave less than 1s of --timeout (1m left)"},
	} {
		if d, why := sendRetryWait(tt.err, tt.n, now, now.Add(tt.left), true, "--timeout"); d != 0 || !strings.Contains(why, tt.want) {
			t.Errorf("%s: %s %q", tt.name, d, why)
		}
	}
}
