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

// testChanges reads the edits after the contract (evidence.TestChanges);
// declared is the claim's declared_test_changes.
func testChanges(after []evidence.Entry, declared string) testEdits {
	return testEdits{}
}
