package validate

import (
	"github.com/claimcheck/claimcheck/pkg/evidence"
)

// testEdits are the session's edits of tests and of what defines the test
// command, as a test_pass verdict shows them.
type testEdits struct {
	notes     []string // every such edit (n=, file, what changed)
	weakening []string // the weakenings the claim does not declare
}

// testChanges reads the edits after the contract (evidence.TestChanges).
// declared is the claim's declared_test_changes: when it is given, the
// weakenings are shown as declared instead of failing the claim.
func testChanges(after []evidence.Entry, declared string) testEdits {
	var out testEdits
	for _, c := range evidence.TestChanges(after) {
		switch {
		case len(c.Weakens) == 0:
			out.notes = append(out.notes, "test change "+c.String())
		case declared != "":
			out.notes = append(out.notes, "declared test weakening "+c.String())
		default:
			out.notes = append(out.notes, "test weakening "+c.String())
			out.weakening = append(out.weakening, c.String())
		}
	}
	if declared != "" && len(out.notes) > 0 {
		out.notes = append(out.notes, "declared_test_changes: "+declared)
	}
	return out
}
