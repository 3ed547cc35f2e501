package finalblock

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ks is a phrase's kind, scope and text, for compact tables.
type ks struct{ kind, scope, text string }

func scopedPhrases(s string) []ks {
	var out []ks
	for _, p := range Parse(s).Phrases {
		out = append(out, ks{p.Kind, p.Scope, p.Text})
	}
	return out
}

func runScoped(t *testing.T, tests []scopedCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, scopedPhrases(tc.in), cmp.AllowUnexported(ks{})); diff != "" {
				t.Errorf("phrases (-want +got):\n%s", diff)
			}
		})
	}
}

type scopedCase struct {
	in   string
	want []ks
}

// TestEnglishScopes: every scope of the English table, with the benign
// look-alikes each row must leave alone.
func TestEnglishScopes(t *testing.T) {
	s := func(scope, text string) ks { return ks{KindDone, scope, text} }
	runScoped(t, []scopedCase{
		// work
		{"Done.", []ks{s(ScopeWork, "Done")}},
		{"I've fixed it and it works now.", []ks{s(ScopeWork, "fixed"), s(ScopeWork, "it works")}},
		// tests
		{"All tests pass.", []ks{s(ScopeTests, "All tests pass")}},
		{"212/212 passed.", []ks{s(ScopeTests, "212/212 passed")}},
		{"12/12 tests passing", []ks{s(ScopeTests, "12/12 tests passing")}},
		{"128 passed, 0 failed", []ks{s(ScopeTests, "128 passed"), s(ScopeTests, "0 failed")}},
		{"All green.", []ks{s(ScopeTests, "All green")}},
		{"CI green.", []ks{s(ScopeTests, "CI green")}},
		{"`go test ./...` passes.", []ks{s(ScopeTests, "`…` passes")}},
		{"12 passed, 2 failed.", nil},
		{"11/12 passed.", nil},
		{"The test checks that the build passes on Windows.", nil},
		{"Is CI green?", nil},
		// build
		{"The build passes.", []ks{s(ScopeBuild, "The build passes")}},
		{"It compiles.", []ks{s(ScopeBuild, "It compiles")}},
		{"Build successful.", []ks{s(ScopeBuild, "Build successful")}},
		{"The binary builds cleanly.", []ks{s(ScopeBuild, "builds cleanly")}},
		{"`go build ./...` passes.", []ks{s(ScopeBuild, "`…` passes")}},
		{"It builds the index lazily.", nil},
		{"The build compiles each package separately.", nil},
		{"It doesn't compile yet.", nil},
		// lint
		{"Lint is clean.", []ks{s(ScopeLint, "Lint is clean")}},
		{"`go vet ./...` is clean.", []ks{s(ScopeLint, "`…` is clean")}},
		{"No lint errors.", []ks{s(ScopeLint, "No lint errors")}},
		{"The code type-checks.", []ks{s(ScopeLint, "The code type-checks")}},
		{"The code is formatted.", []ks{s(ScopeLint, "is formatted")}},
		{"The output is formatted as JSON.", nil},
		{"The linter is configured in .golangci.yml.", nil},
		// deploy
		{"Deployed to production.", []ks{s(ScopeDeploy, "Deployed to production")}},
		{"I released v1.4.0 to PyPI.", []ks{s(ScopeDeploy, "I released")}},
		{"Released v1.4.0.", []ks{s(ScopeDeploy, "Released v1.4.0")}},
		{"Rolled out to staging.", []ks{s(ScopeDeploy, "Rolled out to staging")}},
		{"The site is live.", []ks{s(ScopeDeploy, "is live")}},
		{"It's up and running.", []ks{s(ScopeDeploy, "It's up and running")}},
		{"The fix is now deployed.", []ks{s(ScopeDeploy, "is now deployed")}},
		{"The service is deployed by the CI pipeline on every merge.", nil},
		{"It is deployed as a DaemonSet.", nil},
		{"This is live data from the sensor.", nil},
		{"It is not deployed to production yet.", nil},
		// merge
		{"I merged the fix into main.", []ks{s(ScopeMerge, "merged the fix into main")}},
		{"Pushed to origin/main.", []ks{s(ScopeMerge, "Pushed to origin/main")}},
		{"The PR was merged.", []ks{s(ScopeMerge, "The PR was merged")}},
		{"Landed in trunk.", []ks{s(ScopeMerge, "Landed in trunk")}},
		{"Once the PR is merged, the deploy job runs.", nil},
		{"The PR needs to be merged into main first.", nil},
		{"I have not pushed to main.", nil},
		{"Should I merge it into main?", nil},
		// fetch
		{"The endpoint returns 200.", []ks{s(ScopeFetch, "The endpoint returns 200")}},
		{"The service is reachable again.", []ks{s(ScopeFetch, "is reachable")}},
		{"The handler returns 200 when the token is valid.", nil},
		{"This function returns ok if the key exists.", nil},
		{"The server is reachable only through the VPN.", nil},
		// perf
		{"Parsing is now 40% faster.", []ks{s(ScopePerf, "40% faster")}},
		{"The new index is 3x faster.", []ks{s(ScopePerf, "3x faster")}},
		{"Reduced p99 latency by 30 ms.", []ks{s(ScopePerf, "Reduced p99 latency by")}},
		{"It will be 3x faster once cached.", nil},
		{"It is not 2x faster.", nil},
		// coverage
		{"Coverage is 85%.", []ks{s(ScopeCoverage, "Coverage is 85%")}},
		{"We now have 92% test coverage.", []ks{s(ScopeCoverage, "92% test coverage")}},
		{"We aim for 80% coverage.", nil},
		{"The CI enforces a coverage threshold of 80%.", nil},
		// security
		{"No vulnerabilities found.", []ks{s(ScopeSecurity, "No vulnerabilities")}},
		{"The security scan is clean.", []ks{s(ScopeSecurity, "The security scan is clean")}},
		{"govulncheck reports no vulnerabilities.", []ks{s(ScopeSecurity, "govulncheck reports no vulnerabilities")}},
		{"Make sure no vulnerabilities are introduced.", nil},
		// deps
		{"Bumped `golang.org/x/sync` to v0.12.0.", []ks{s(ScopeDeps, "Bumped `…` to v0.12.0")}},
		{"Upgraded the grpc module to 1.66.0.", []ks{s(ScopeDeps, "Upgraded the grpc module to 1.66.0")}},
		{"Dependencies updated.", []ks{s(ScopeDeps, "Dependencies updated")}},
		{"I updated the dependencies.", []ks{s(ScopeDeps, "updated the dependencies")}},
		{"Bumped the version to 1.4.0.", nil},
		{"Dependencies are updated weekly by Renovate.", nil},
		{"Updating dependencies is out of scope.", nil},
		// migration
		{"The migration was applied.", []ks{s(ScopeMigration, "The migration was applied")}},
		{"Migrations ran.", []ks{s(ScopeMigration, "Migrations ran")}},
		{"I ran the database migrations.", []ks{s(ScopeMigration, "ran the database migrations")}},
		{"Migrated the database.", []ks{s(ScopeMigration, "Migrated the database")}},
		{"Run the migrations before deploying.", nil},
		{"Migrations are run on startup.", nil},
		// change
		{"I updated `config.yaml`.", []ks{s(ScopeChange, "I updated `…`")}},
		{"- Updated README.md with the new flags.", []ks{s(ScopeChange, "Updated README.md")}},
		{"`handler.go` has been modified.", []ks{s(ScopeChange, "`…` has been modified")}},
		{"The updated config.yaml is loaded at startup.", nil},
		{"If you update `go.mod`, run go mod tidy.", nil},
		{"I changed my mind about the approach.", nil},
		{"I haven't edited `main.go`.", nil},
	})
}

// TestHonestReports: saying what was not run or verified is neither a
// blockage nor a claim; needing the human to go on still is a blockage.
func TestHonestReports(t *testing.T) {
	runScoped(t, []scopedCase{
		{"I could not run the tests here; nothing is verified.", nil},
		{"I wasn't able to run the test suite, so this is unverified.", nil},
		{"I couldn't build the project because Docker is missing here; the change is untested.", nil},
		{"I was unable to verify the fix end to end.", nil},
		{"I can't proceed without the credentials.", []ks{{KindBlocked, "", "can't proceed"}}},
		{"I couldn't connect to the database.", []ks{{KindBlocked, "", "I couldn't connect"}}},
		{"I couldn't push to the repo: permission denied.", []ks{{KindBlocked, "", "I couldn't push"}}},
	})
}
