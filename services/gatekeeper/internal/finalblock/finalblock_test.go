package finalblock

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// Attestation ids used in the messages.
const (
	id1 = "01KAB0F0000000000000000001"
	id2 = "01KAB0F0000000000000000002"
	id3 = "01KAB0B0000000000000000001"
)

// doneBlock is a well-formed final block citing id1.
const doneBlock = "```claimcheck\n" + `{
  "type": "done",
  "summary": "Fixed the nil dereference in pkg/x.go",
  "claims": [{"claim_type": "done", "attestation_id": "` + id1 + `"}],
  "what_succeeded": "fix and regression test",
  "what_remains": "",
  "next_route_or_question": ""
}` + "\n```"

var wantDone = &Block{
	Name:          InfoString,
	Type:          TypeDone,
	Summary:       "Fixed the nil dereference in pkg/x.go",
	Claims:        []Claim{{ClaimType: ClaimDone, AttestationID: id1}},
	WhatSucceeded: "fix and regression test",
}

// block wraps JSON in a claimcheck fence.
func block(json string) string { return "```claimcheck\n" + json + "\n```" }

func TestParse(t *testing.T) {
	claims33 := make([]string, 33)
	for i := range claims33 {
		claims33[i] = fmt.Sprintf(`{"claim_type":"done","attestation_id":"01KAB0F00000000000000000%02d"}`, i)
	}
	tests := []struct {
		name  string
		msg   string
		block *Block
		err   string   // substring of BlockErr; "" for none
		kinds []string // phrase kinds in order
		prose string   // when set, the expected Prose
	}{
		// Final blocks that parse.
		{
			name: "claude-style summary with block",
			msg: "I've fixed the nil dereference.\n\n## Changes\n- `pkg/x.go`: check `cfg` before use\n- `pkg/x_test.go`: regression test `TestNilConfig`\n\n" +
				"```bash\n$ go test ./pkg/...\nok  \tpkg\t0.012s\n```\n\n" + doneBlock,
			block: wantDone,
			kinds: []string{KindDone, KindDone}, // the prose's "fixed", the summary's "Fixed"
			prose: "I've fixed the nil dereference.\n\n## Changes\n- `…`: check `…` before use\n- `…`: regression test `…`",
		},
		{
			name:  "legacy brian_final block",
			msg:   "Done.\n```brian_final\n{\"type\":\"done\",\"summary\":\"s\",\"claims\":[{\"claim_type\":\"done\",\"attestation_id\":\"" + id1 + "\"}]}\n```",
			block: &Block{Name: LegacyInfoString, Type: TypeDone, Summary: "s", Claims: []Claim{{ClaimDone, id1}}},
			kinds: []string{KindDone},
			prose: "Done.",
		},
		{
			name:  "tilde fence",
			msg:   "Summary below.\n~~~claimcheck\n{\"type\":\"partial\",\"summary\":\"half\",\"what_succeeded\":\"a\",\"what_remains\":\"b\",\"next_route_or_question\":\"c?\"}\n~~~\n",
			block: &Block{Name: InfoString, Type: TypePartial, Summary: "half", WhatSucceeded: "a", WhatRemains: "b", NextRouteOrQuestion: "c?"},
		},
		{
			name:  "longer closing fence, indented opening, info string with attributes",
			msg:   "Blocked on VPN access.\n  ````claimcheck json\n  {\"type\":\"blocked\",\"summary\":\"vpn\",\"claims\":[{\"claim_type\":\"blocked\",\"attestation_id\":\"" + id3 + "\"}]}\n  `````\n",
			block: &Block{Name: InfoString, Type: TypeBlocked, Summary: "vpn", Claims: []Claim{{ClaimBlocked, id3}}},
			kinds: []string{KindBlocked},
		},
		{
			name:  "upper-case info string",
			msg:   "```CLAIMCHECK\n{\"type\":\"partial\",\"summary\":\"\"}\n```",
			block: &Block{Name: InfoString, Type: TypePartial},
		},
		{
			name: "seed-style claims with extra members and unknown top-level members",
			msg: block(`{"type":"done","summary":"s","confidence":0.9,"claims":[` +
				`{"claim_type":"done","object":"src/app.py","validator_id":"test_pass","attestation_id":"` + id1 + `","artifact_hash":"sha256:ab"},` +
				`{"claim_type":"partial","attestation_id":"` + id2 + `","notes":{"k":[1,2]}}]}`),
			block: &Block{Name: InfoString, Type: TypeDone, Summary: "s", Claims: []Claim{{ClaimDone, id1}, {ClaimPartial, id2}}},
		},
		{
			name:  "delegation block with request in prose",
			msg:   "I tried curl, the fetch tool and a headless browser; the page needs your SSO login. Could you paste the table from https://intra.example/report?\n\n" + block(`{"type":"delegation","summary":"need the report","claims":[{"claim_type":"delegation","attestation_id":"01KAB0D0000000000000000001"}],"next_route_or_question":"paste the table"}`),
			block: &Block{Name: InfoString, Type: TypeDelegation, Summary: "need the report", Claims: []Claim{{ClaimDelegation, "01KAB0D0000000000000000001"}}, NextRouteOrQuestion: "paste the table"},
			kinds: []string{KindDelegation},
		},
		{
			name:  "CRLF line endings",
			msg:   "All tests pass.\r\n\r\n" + strings.ReplaceAll(doneBlock, "\n", "\r\n") + "\r\n",
			block: wantDone,
			kinds: []string{KindDone, KindDone},
		},
		{
			name:  "block followed by a closing remark",
			msg:   doneBlock + "\n\nLet me know if you want the retry logic too.",
			block: wantDone,
			kinds: []string{KindDone}, // the summary's "Fixed"
			prose: "Let me know if you want the retry logic too.",
		},

		// Final blocks that do not parse.
		{name: "two blocks", msg: doneBlock + "\n\n" + doneBlock, err: "2 claimcheck blocks; give exactly one"},
		{name: "claimcheck and brian_final", msg: doneBlock + "\n```brian_final\n{}\n```", err: "2 claimcheck blocks; give exactly one"},
		{name: "unterminated block", msg: "Fixed.\n```claimcheck\n{\"type\":\"done\",\"summary\":\"s\",\"claims\":[]}\n", err: "the claimcheck block is not closed; end it with a line holding only ```", kinds: []string{KindDone}},
		{name: "closing fence shorter than opening", msg: "````claimcheck\n{\"type\":\"partial\"}\n```\n", err: "not closed; end it with a line holding only ````"},
		{name: "trailing comma", msg: block(`{"type":"done","summary":"s",}`), err: "invalid JSON"},
		{name: "duplicate member", msg: block(`{"type":"partial","summary":"a","type":"done"}`), err: `duplicate object member name "type"`},
		{name: "duplicate member inside a claim", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"` + id1 + `","attestation_id":"` + id2 + `"}]}`), err: `duplicate object member name "attestation_id"`},
		{name: "unknown type", msg: block(`{"type":"finished","summary":"x","claims":[]}`), err: `type: "finished" is not one of done, partial, blocked, delegation`},
		{name: "type in the wrong case", msg: block(`{"type":"Done","summary":"x"}`), err: `type: "Done" is not one of`},
		{name: "missing type", msg: block(`{"summary":"x"}`), err: "type: missing"},
		{name: "summary is a number", msg: block(`{"type":"done","summary":42}`), err: "summary: got number, want a string"},
		{name: "slot is null", msg: block(`{"type":"partial","what_remains":null}`), err: "what_remains: got null, want a string"},
		{name: "claims is an object", msg: block(`{"type":"done","claims":{"claim_type":"done"}}`), err: "claims: got object, want an array"},
		{name: "claim is a string", msg: block(`{"type":"done","claims":["` + id1 + `"]}`), err: "claims[0]: got string, want an object"},
		{name: "empty attestation id names the claim", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"` + id1 + `"},{"claim_type":"done","attestation_id":""}]}`), err: "claims[1].attestation_id: empty"},
		{name: "missing attestation id", msg: block(`{"type":"done","claims":[{"claim_type":"done"}]}`), err: "claims[0].attestation_id: missing"},
		{name: "attestation id not a ULID", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"pass-123"}]}`), err: `claims[0].attestation_id: "pass-123" is not an attestation id (8 characters`},
		{name: "attestation id with a letter outside Crockford base32", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"01KAB0F000000000000000000U"}]}`), err: `character 26 is "U"`},
		{name: "attestation id in lower case", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"01kab0f0000000000000000001"}]}`), err: "write it in upper case"},
		{name: "attestation id overflowing 128 bits", msg: block(`{"type":"done","claims":[{"claim_type":"done","attestation_id":"81KAB0F0000000000000000001"}]}`), err: "starts with a digit 0-7"},
		{name: "unknown claim type", msg: block(`{"type":"done","claims":[{"claim_type":"success","attestation_id":"` + id1 + `"}]}`), err: `claims[0].claim_type: "success" is not one of`},
		{name: "several problems listed at once", msg: block(`{"type":"finished","summary":null,"claims":[{"claim_type":"ok","attestation_id":""}]}`), err: `type: "finished" is not one of done, partial, blocked, delegation; summary: got null, want a string; claims[0].claim_type: "ok" is not one of done, partial, blocked, delegation; claims[0].attestation_id: empty`},
		{name: "array instead of object", msg: block(`[{"type":"done"}]`), err: "got a JSON array; want one JSON object"},
		{name: "two objects", msg: block(`{"type":"done"}` + "\n" + `{"type":"done"}`), err: "more data after the object"},
		{name: "invalid UTF-8", msg: block("{\"type\":\"done\",\"summary\":\"caf\xe9\"}"), err: "invalid UTF-8"},
		{name: "empty block", msg: "```claimcheck\n\n```", err: "empty; want one JSON object"},
		{name: "too many claims", msg: block(`{"type":"done","claims":[` + strings.Join(claims33, ",") + `]}`), err: "claims: 33 entries, at most 32 allowed"},
		{name: "block too large", msg: block(`{"type":"done","summary":"` + strings.Repeat("x", MaxBlockBytes) + `"}`), err: "bytes of JSON, at most 65536 allowed"},

		// Things that look like a block and are not.
		{
			name:  "example block inside a longer fence",
			msg:   "Done. The block format is:\n````markdown\n```claimcheck\n{\"type\":\"done\"}\n```\n````\n",
			kinds: []string{KindDone},
			prose: "Done. The block format is:",
		},
		{name: "block inside a blockquote", msg: "You wrote:\n> ```claimcheck\n> {\"type\":\"done\"}\n> ```\nThat is not valid."},
		{name: "inline triple backticks on one line", msg: "Use ```claimcheck``` fences.", prose: "Use `…` fences."},
		{name: "other info string", msg: "```claimcheck-example\n{\"type\":\"finished\"}\n```"},

		// Prose and phrases.
		{name: "one-line claim without block", msg: "I've fixed the bug in `pkg/x.go` and all tests pass.", kinds: []string{KindDone, KindDone}},
		{
			name:  "test output quoted in a fence is not a claim",
			msg:   "Here is the output:\n```\n=== RUN   TestDone\n--- PASS: TestDone (0.00s)\nPASS\nok  \tgithub.com/x/y\t0.011s\n```\nThe refactor itself is still in progress.",
			prose: "Here is the output:\n\nThe refactor itself is still in progress.",
		},
		{
			name: "diff in a fence is not a claim",
			msg:  "Proposed change (not applied yet):\n```diff\n-\t// TODO: fixed?\n+\tif done { return }\n```\nShall I apply it?",
		},
		{name: "quoted lines are not prose", msg: "The CI log says:\n> All tests passed\n> Build complete\nbut the deploy step has not run.", prose: "The CI log says:\n\nbut the deploy step has not run."},
		{name: "identifiers are not claims", msg: "The flag --fixed-strings is read in done_test.go, TestDone and pkg/done/run.go via isDone()."},
		{name: "negations", msg: "The migration is not done yet; I haven't finished the backfill, the flaky test isn't fixed yet, and the feature is not yet complete. No tests pass on Windows."},
		{name: "unicode apostrophes", msg: "It isn’t fixed yet and I haven’t finished. I’m blocked by the VPN though.", kinds: []string{KindBlocked}},
		{name: "questions", msg: "Is it done on your side? Should the retry be fixed at 3 attempts? Do all tests pass for you?"},
		{name: "hedged claim still counts", msg: "This should be fixed now.", kinds: []string{KindDone}},
		{name: "future and conditions", msg: "Once CI is green, I'll merge it. It will be done after the review. If the tests pass, we can ship."},
		{name: "instructions to the reader", msg: "To verify, run `make test` and make sure all tests pass."},
		{name: "description of code, not a report", msg: "The retry logic is implemented in `client.go`; the hostname is resolved at startup and validation is done by the middleware. Here's how it works: a fixed size buffer is flushed when it fills."},
		{name: "what I've done is not a claim", msg: "Here's what I've done so far:\n- read the handler\n- added logging"},
		{name: "status table", msg: "| Task | Status |\n|---|---|\n| Fix login | ✅ Done |\n| Add tests | in progress |", kinds: []string{KindDone}},
		{name: "bold done and works as expected", msg: "**Done.** Everything works as expected.", kinds: []string{KindDone, KindDone}},
		{name: "code span passes", msg: "I verified the fix locally: `go test ./...` passes and `go vet` is clean.", kinds: []string{KindDone, KindDone, KindDone}},
		{name: "ready to merge", msg: "Tests are passing and the branch is ready to merge.", kinds: []string{KindDone, KindDone}},
		{name: "blocked phrases", msg: "I'm blocked: the staging cluster rejects my token, so I cannot proceed.", kinds: []string{KindBlocked, KindBlocked}},
		{name: "delegation phrases", msg: "I was unable to access the private repo. Could you send me the tarball? You'll need to grant the bot read access.", kinds: []string{KindDelegation, KindDelegation, KindDelegation}},
		{name: "please run is a delegation", msg: "Please run `make e2e` on your machine and tell me what it prints.", kinds: []string{KindDelegation}},
		{name: "unclosed code fence swallows the rest", msg: "Done.\n```go\nfunc main() {}\nAll tests pass.\n", kinds: []string{KindDone}, prose: "Done."},
		{name: "empty message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Parse(tc.msg)
			if diff := cmp.Diff(tc.block, m.Block); diff != "" {
				t.Errorf("block (-want +got):\n%s", diff)
			}
			switch {
			case tc.err == "" && m.BlockErr != nil:
				t.Errorf("unexpected block error: %v", m.BlockErr)
			case tc.err != "" && m.BlockErr == nil:
				t.Errorf("no block error; want %q", tc.err)
			case tc.err != "" && !strings.Contains(m.BlockErr.Error(), tc.err):
				t.Errorf("block error %q does not contain %q", m.BlockErr, tc.err)
			}
			if m.BlockErr != nil {
				if msg := m.BlockErr.Error(); unicode.IsUpper([]rune(msg)[0]) || strings.HasSuffix(msg, ".") {
					t.Errorf("error %q is not lower case without trailing punctuation", msg)
				}
			}
			var kinds []string
			for _, p := range m.Phrases {
				kinds = append(kinds, p.Kind)
			}
			if diff := cmp.Diff(tc.kinds, kinds); diff != "" {
				t.Errorf("phrase kinds (-want +got):\n%s\nphrases: %+v\nprose: %q", diff, m.Phrases, m.Prose)
			}
			if tc.prose != "" && tc.prose != m.Prose {
				t.Errorf("prose:\n got %q\nwant %q", m.Prose, tc.prose)
			}
		})
	}
	if len(tests) < 40 {
		t.Fatalf("%d messages; want at least 40", len(tests))
	}
}

// BenchmarkParse runs Parse on realistic messages (realistic 3KB is the
// one the package's cost is compared on) and on 256 KiB inputs built to hit
// each pass's worst case; ns/op should grow linearly with size.
func BenchmarkParse(b *testing.B) {
	const size = 256 << 10
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	for _, bc := range []struct{ name, msg string }{
		{"realistic", "I've fixed the nil dereference.\n\n## Changes\n- `pkg/x.go`: check `cfg` before use\n\n```bash\n$ go test ./...\nok\n```\n\nAll tests pass.\n\n" + doneBlock},
		{"realistic 3KB", realisticMessage},
		{"realistic 3KB Japanese", realisticJapanese},
		{"Russian and Ukrainian ties", fill("готово ")},
		{"CJK with spaces", fill("テ     ス ")},
		{"look-alike letters", fill("dоne аll ")},
		{"status rows", fill("| Tests | ✅ |\n")},
		{"unread script", fill("ทดสอบ 12/12 ")},
		{"backtick runs", fill("` `` ``` a ")},
		{"fence lines", fill("```\n~~~~\n")},
		{"unclosed block", "```claimcheck\n" + fill("{\"a\":1}\n")},
		{"negated claims", fill("not done, ")},
		{"phrase prefixes", fill("i was unable to ")},
		{"one long word", fill("a")},
		{"quotes and gaps", fill("\"done\" ?! ")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.msg)))
			for b.Loop() {
				Parse(bc.msg)
			}
		})
	}
}
