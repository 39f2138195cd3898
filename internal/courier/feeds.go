package courier

import (
	"sync"

	"github.com/a2a-courier/a2a-courier/client"
	"github.com/a2a-courier/a2a-courier/store"
)

// feeds are the conversation lists a worker reads for the tasks it
// follows: one per Kibana (URL and space), credential, agent and release,
// so that a poll reads each agent's list once and then only the
// conversations that changed (client.Feed).
type feeds struct {
	mu sync.Mutex
	m  map[string]*client.Feed
}

func newFeeds() *feeds { return &feeds{m: map[string]*client.Feed{}} }

// feed returns the feed of a Kibana task's agent, made with k on first
// use; nil for another target (or no feeds: a foreground send follows one
// task, for which its own read is cheaper than the list).
func (f *feeds) feed(k *client.Kibana, x *store.Record) *client.Feed {
	if f == nil || x.Target.Kind != store.TargetKibana {
		return nil
	}
	t := x.Target
	key := t.URL + "\x00" + t.Space + "\x00" + x.Identity + "\x00" + x.Agent + "\x00" + t.KibanaVersion + "\x00" + t.KibanaFlavor
	f.mu.Lock()
	defer f.mu.Unlock()
	if fd := f.m[key]; fd != nil {
		return fd
	}
	info := client.ServerInfo{Number: t.KibanaVersion, Flavor: t.KibanaFlavor}
	fd := client.NewFeed(k, x.Agent, info.MovesUpdatedAt(), info.Serverless())
	f.m[key] = fd
	return fd
}
