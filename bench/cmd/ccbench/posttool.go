package main

// The post-tool inspection rows of the gate benchmark: what inspecting a
// tool's result (pkg/inject's source tag and injection scan, pkg/scrub's
// secret scan with ingest's rules beside it, a finding when one flags)
// adds inside gatekeeper.Service.Handle, against PreToolUse requests
// interleaved with it in the same open-loop stream.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/inject"
	"github.com/claimcheck/claimcheck/pkg/scrub"
	"github.com/claimcheck/claimcheck/pkg/subject"
	"github.com/claimcheck/claimcheck/schemas"
)

// benignPage is size bytes of documentation dense in the scanner's anchors
// (prompts, agents, instructions, encodings) that injects nothing.
func benignPage(size int) string {
	para := "## Configuring the agent\n\nThe assistant reads the system prompt from `prompts/system.md`; follow the instructions " +
		"in CONTRIBUTING.md before you change it. Previous versions ignored the `rules` key; see the changelog. " +
		"An AI agent running in CI should use `--no-input`. Encoded examples: `aGVsbG8gd29ybGQ=` is \"hello world\".\n\n"
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(para)
	}
	return b.String()[:size]
}

func postToolPayload(session string, n int, page string) []byte {
	url := "https://docs.example.com/setup"
	resp, _ := json.Marshal(map[string]any{"bytes": len(page), "code": 200, "codeText": "OK", "result": page, "durationMs": 210,
		"url": url})
	return fmt.Appendf(nil,
		`{"session_id":%q,"transcript_path":"/home/user/.claude/projects/-home-user-my-project/%s.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"WebFetch","tool_input":{"url":%q,"prompt":"How do I set it up?"},"tool_response":%s,"tool_use_id":"toolu_%08d","duration_ms":215}`,
		session, session, gateCwd, url, resp, n)
}

// postToolRate is the open-loop rate of the post-tool rows: a 64 KiB scan
// takes milliseconds of CPU, so at the gate rows' 1000 requests/s half of
// them would need more cores than a 2-core machine has, and the rows would
// time the queue instead.
const postToolRate = 100

// postToolRows times n in-service requests at postToolRate, alternating
// chunks of PreToolUse and of PostToolUse with a 64 KiB WebFetch result,
// and prints their percentiles.
func (ge *gateEnv) postToolRows(n int) error {
	page := benignPage(64 << 10)
	reqs := make([]gateReq, n)
	// Sessions of their own, at NORMAL (the gate rows' mix denies
	// destructive commands, which contains its sessions), and commands the
	// policy allows.
	allowed := []string{"ls -la", "go test ./...", "git status --short", "go build ./..."}
	for i := range n {
		s := fmt.Sprintf("bench-posttool-%d", i%gateSessions)
		eid, _ := ge.gen.New()
		if (i/gateChunk)%2 == 0 {
			reqs[i] = ge.request(subject.Gate("bench", subject.GatePreTool), s, "PreToolUse", eid,
				preToolPayload(s, allowed[i%len(allowed)], i))
		} else {
			reqs[i] = ge.request(subject.Gate("bench", subject.GatePostTool), s, "PostToolUse", eid, postToolPayload(s, i, page))
		}
	}
	took := make([]time.Duration, n)
	errs := make([]error, n)
	ctx := context.Background()
	paced(n, postToolRate, func(i int) {
		t := time.Now()
		reply, err := ge.svc.Handle(ctx, reqs[i].subj, reqs[i].data)
		took[i] = time.Since(t)
		if err == nil {
			var d schemas.GateDecision
			if d, err = ge.check(reqs[i], reply, time.Now()); err == nil && d.Level != "" {
				err = fmt.Errorf("decided at level %s: the rows must run at NORMAL", d.Level)
			}
		}
		errs[i] = err
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("post-tool rows: %w", err)
	}
	var pre, post []time.Duration
	for i, q := range reqs {
		if q.hook == "PostToolUse" {
			post = append(post, took[i])
		} else {
			pre = append(pre, took[i])
		}
	}
	fmt.Printf("Post-tool inspection in-service (Service.Handle), open loop at %d requests/s, %d requests in chunks of %d\n",
		postToolRate, n, gateChunk)
	fmt.Printf("  %-66s %9s %9s\n", "", "p50", "p99")
	fmt.Printf("    %-64s %9s %9s\n", "PreToolUse (Bash)", ms(pct(pre, 50)), ms(pct(pre, 99)))
	fmt.Printf("    %-64s %9s %9s\n", "PostToolUse, a 64 KiB WebFetch result (benign, dense in anchors)",
		ms(pct(post, 50)), ms(pct(post, 99)))
	fmt.Printf("    %-64s %9s %9s   (target: ≤ 1 ms at p99)\n", "  added by the inspection (PostToolUse − PreToolUse)",
		ms(pct(post, 50)-pct(pre, 50)), ms(pct(post, 99)-pct(pre, 99)))
	// The p99 row subtracts two tenth-slowest requests: a few stalls of
	// the host (milliseconds, not the inspection's) among either kind move
	// it. Say how many there were, so a run can be read for what it is.
	fmt.Printf("  requests over %s (host stalls): PreToolUse %d, PostToolUse %d (of %d each; from %d in a kind, its p99 is a stall)\n",
		ms(stallAt), over(pre, stallAt), over(post, stallAt), len(post), len(post)-((len(post)*99+99)/100-1)) // pct's index
	inj, sec, err := scanCost(page)
	if err != nil {
		return err
	}
	// What the host gives one scan: the same page's two scans in this
	// process, one after the other, after the rows. The inspection runs
	// them side by side when a second core wakes in time (docs/firewall.md):
	// between about the longer of them and their sum, plus reading the
	// payload. Hosts of the same machine type have differed twofold here.
	fmt.Printf("  the page's scans alone on this host, one after the other (p50 of %d): injection %s, secrets %s\n",
		scanCostRuns, ms(inj), ms(sec))
	return nil
}

// scanCostRuns is how many times scanCost times each scan.
const scanCostRuns = 101

// scanCost returns the median time of pkg/inject's scan and of pkg/scrub's
// secret scan (ingest's rules, as the gatekeeper runs it) of page.
func scanCost(page string) (injection, secrets time.Duration, err error) {
	sc, err := scrub.New()
	if err != nil {
		return 0, 0, fmt.Errorf("post-tool rows: the secret scanner: %w", err)
	}
	inj := make([]time.Duration, scanCostRuns)
	sec := make([]time.Duration, scanCostRuns)
	for i := range scanCostRuns {
		t := time.Now()
		if r := inject.Scan(page); r.Flagged() {
			return 0, 0, fmt.Errorf("post-tool rows: the benign page is flagged: %v", r.Findings)
		}
		inj[i] = time.Since(t)
		t = time.Now()
		if found := sc.Secrets(page); len(found) > 0 {
			return 0, 0, fmt.Errorf("post-tool rows: the benign page holds %d secrets", len(found))
		}
		sec[i] = time.Since(t)
	}
	return pct(inj, 50), pct(sec, 50), nil
}

// stallAt is the time over which a post-tool row's request is counted as
// stalled: three times the longest PostToolUse p50 measured on the
// project's VM (about 1.3 ms).
const stallAt = 4 * time.Millisecond

// over counts the durations over limit.
func over(d []time.Duration, limit time.Duration) int {
	n := 0
	for _, x := range d {
		if x > limit {
			n++
		}
	}
	return n
}
