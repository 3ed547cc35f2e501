package stream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/natstest"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// problems lists each stream's problems, or is empty.
func problems(hs []stream.Health) string {
	var b strings.Builder
	for _, h := range hs {
		if len(h.Problems) > 0 {
			fmt.Fprintf(&b, "%s: %s; ", h.Name, strings.Join(h.Problems, ", "))
		}
	}
	return b.String()
}

// Status on a real three-node cluster: every stream healthy once its
// replicas have caught up; with two of the three nodes down, every stream
// reports what is wrong (no answer, no leader, replicas offline) within
// its bound; with them back, healthy again.
func TestStatusSeesAClusterLoseAndRegainItsQuorum(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	js := c.Bootstrap(t)
	names := stream.Names(stream.DefaultOptions())
	if len(names) != 12 || names[0] != stream.Intake || names[len(names)-1] != "OBJ_"+stream.ObjectArtifacts {
		t.Fatalf("names: %v", names)
	}
	natstest.Eventually(t, time.Minute, func() error {
		hs := stream.Status(t.Context(), js, names, 2*time.Second)
		for _, h := range hs {
			if h.Replicas != 3 || h.Leader == "" || len(h.Peers) != 2 {
				return fmt.Errorf("%s: %+v", h.Name, h)
			}
		}
		if p := problems(hs); p != "" {
			return fmt.Errorf("a settled cluster: %s", p)
		}
		return nil
	})
	for _, s := range c.Servers[1:] {
		s.Shutdown()
	}
	// The survivor leads some streams for a while yet (until it sees its
	// quorum lost); those answer, and name the replicas that are gone.
	natstest.Eventually(t, 20*time.Second, func() error {
		for _, h := range stream.Status(t.Context(), js, names, 2*time.Second) {
			if h.Leader != "" && strings.Contains(strings.Join(h.Problems, " "), "replica") {
				return nil
			}
		}
		return fmt.Errorf("no stream led by the survivor names its lost replicas")
	})
	natstest.Eventually(t, time.Minute, func() error {
		start := time.Now()
		hs := stream.Status(t.Context(), js, names, 2*time.Second)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("Status took %s with every request bounded by 2s and sent at once", took)
		}
		for _, h := range hs {
			if len(h.Problems) == 0 {
				return fmt.Errorf("%s reports no problem with two of its three nodes down: %+v", h.Name, h)
			}
		}
		return nil
	})
	for i := range c.Servers[1:] {
		c.Restart(t, i+1)
	}
	natstest.Eventually(t, 2*time.Minute, func() error {
		if p := problems(stream.Status(t.Context(), js, names, 2*time.Second)); p != "" {
			return fmt.Errorf("quorum back: %s", p)
		}
		return nil
	})
}

// On a single server (R1, claimcheck up) nothing is replicated and no
// leader is needed beyond the server itself.
func TestStatusOfASingleServer(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.Connect(t, s.ClientURL())
	natstest.Bootstrap(t, js, nil)
	hs := stream.Status(t.Context(), js, stream.Names(stream.DefaultOptions()), 2*time.Second)
	if p := problems(hs); p != "" || len(hs) != 12 || hs[0].Replicas != 1 {
		t.Fatalf("single server: %s %+v", p, hs)
	}
	// A stream that does not exist is a problem, named.
	hs = stream.Status(t.Context(), js, []string{"NOPE"}, 2*time.Second)
	if len(hs[0].Problems) != 1 || !strings.Contains(hs[0].Problems[0], "not found") {
		t.Fatalf("a missing stream: %+v", hs)
	}
}
