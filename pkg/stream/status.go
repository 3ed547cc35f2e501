package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Names lists the JetStream streams behind claimcheck's streams, buckets
// (KV_<bucket>) and object store (OBJ_<bucket>), in Ensure's order.
func Names(o Options) []string {
	var out []string
	for _, c := range Configs(o) {
		out = append(out, c.Name)
	}
	for _, c := range KeyValueConfigs(o) {
		out = append(out, "KV_"+c.Bucket)
	}
	for _, c := range ObjectStoreConfigs(o) {
		out = append(out, "OBJ_"+c.Bucket)
	}
	return out
}

// Health is what the cluster says of one stream: its leader and replicas,
// and what stands in the way of it taking writes and reads now.
type Health struct {
	Name     string    `json:"name"`
	Replicas int       `json:"replicas"`
	Leader   string    `json:"leader,omitempty"`
	Msgs     uint64    `json:"messages"`
	Peers    []Replica `json:"peers,omitempty"`
	// Problems is empty when the stream answers, has a leader, and every
	// replica is current and online.
	Problems []string `json:"problems,omitempty"`
}

// Replica is a follower as the stream's leader sees it.
type Replica struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Lag     uint64        `json:"lag,omitempty"`
	Active  time.Duration `json:"last_seen_ns"`
}

// Status asks for the state of every stream in names at once, each within
// per. A stream whose raft group has no leader does not answer at all, so
// a request that runs out of time is reported as such rather than waited
// on; nats-server's own /healthz counts such a group as current once its
// log is applied.
func Status(ctx context.Context, js jetstream.JetStream, names []string, per time.Duration) []Health {
	out := make([]Health, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, per)
			defer cancel()
			out[i] = health(ctx, js, name, per)
		})
	}
	wg.Wait()
	return out
}

func health(ctx context.Context, js jetstream.JetStream, name string, per time.Duration) Health {
	h := Health{Name: name}
	s, err := js.Stream(ctx, name)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		h.Problems = append(h.Problems, fmt.Sprintf("no answer within %s (a raft group without a leader does not answer)", per))
		return h
	case err != nil:
		h.Problems = append(h.Problems, err.Error())
		return h
	}
	info := s.CachedInfo()
	h.Replicas, h.Msgs = info.Config.Replicas, info.State.Msgs
	ci := info.Cluster
	if ci == nil {
		if h.Replicas > 1 {
			h.Problems = append(h.Problems, "no cluster information")
		}
		return h
	}
	h.Leader = ci.Leader
	if h.Leader == "" && h.Replicas > 1 {
		h.Problems = append(h.Problems, "no leader")
	}
	for _, r := range ci.Replicas {
		h.Peers = append(h.Peers, Replica{Name: r.Name, Current: r.Current, Offline: r.Offline, Lag: r.Lag, Active: r.Active})
		switch {
		case r.Offline:
			h.Problems = append(h.Problems, fmt.Sprintf("replica %s offline", r.Name))
		case !r.Current:
			h.Problems = append(h.Problems, fmt.Sprintf("replica %s not current (%d behind, last seen %s ago)", r.Name, r.Lag,
				r.Active.Round(time.Millisecond)))
		}
	}
	if h.Replicas > 1 && len(ci.Replicas) < h.Replicas-1 {
		h.Problems = append(h.Problems, fmt.Sprintf("%d of %d replicas known to the leader", len(ci.Replicas)+1, h.Replicas))
	}
	return h
}
