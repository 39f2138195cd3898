package serve

import (
	"time"

	"github.com/a2a-courier/a2a-courier/internal/runner"
)

func runnerLimits(grace time.Duration) runner.Limits {
	l := runner.DefaultLimits
	l.Grace = grace
	return l
}
