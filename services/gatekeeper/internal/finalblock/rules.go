package finalblock

// rule is one reviewed claim phrase.
//
// In a word table, phrase is a sequence of words matched whole, as normWord
// reads them, against the words of the text; a group "(a|b c|)" matches any
// one of its alternatives, and an empty alternative makes it optional.
// Words are what the tokenizer produces: letters, digits, marks and the
// identifier characters _ - . / \ ' @ # $ % + = ~ &. A word "stem*" matches
// any longer word starting with stem, "*ending" any longer word ending so.
// Words in angle brackets match classes of tokens: <code> an inline code
// span, <pass> and <fail> status marks, <num> a number, <n/n> a count of
// all (12/12), <pct> a percentage, <mult> a factor (3x), <ver> a dotted
// version, <ref> #123, <file> a file name or path, <any> any word.
//
// In a substring table, phrase is matched character by character within a
// sentence, groups as above; blanks in the pattern and the text are
// ignored.
//
// Every phrase is also cancelled by the general rules of its language
// (negation and, for done and blocked, hypotheticals and questions); the
// fields below add exceptions that only make sense for this phrase.
type rule struct {
	kind string
	// scope: what a done phrase asserts (a Scope constant); "" is ScopeWork.
	scope  string
	phrase string
	// The phrase does not count right after one of these words (substring
	// tables: substrings).
	notAfter string
	// The phrase does not count right before one of these words
	// (substring tables: substrings, "x$" for x ending its clause).
	notBefore string
	// The phrase does not count after one of these words earlier in its
	// clause.
	unless string
	// The phrase counts only after one of these words earlier in its
	// clause (word tables; "lütfen … gönderin").
	needs string
	// The phrase counts only as a predicate: right after a linking word
	// (is, 's, now, all, have, …) or at the end of its clause.
	predicate bool
	// The phrase counts only at the end of its clause, or (word tables)
	// before one of the words of endOr, or (substring tables) before one of
	// the language's joiners.
	final bool
	endOr string
	// The phrase does not count when one of these words is part of it
	// (the words an <any> matched).
	notIn string
	// The phrase counts only at the start of a sentence (a list item).
	first bool
	// The phrase does not count in a sentence that reports a failure
	// ("12 passed, 2 failed").
	noFailure bool
}

// Word lists shared by several English rules.
const (
	// An adjective before a noun, not a claim: "the fixed size".
	determiners = "a an the this that these those some any each every its their our your my his her another"
	// Describing how code works, not reporting work: "resolved at runtime".
	describing = "by via using through as in inside within on at like per lazily automatically internally"
	// Verbs a human could do or provide for the agent.
	asks = "(send|provide|share|give|upload|paste|grant|forward|attach|add|create|run|restart|install|set|generate|export|enable|rotate|log in|sign in)"
	// First-person inability: "I couldn't", "we were unable to".
	cannot      = "(i|we) (can't|cannot|can not|couldn't|could not|wasn't able to|weren't able to|was not able to|were not able to|was unable to|were unable to|am unable to|am not able to|are unable to|are not able to)"
	cannotShort = "(i'm|we're) (unable to|not able to|still unable to|still not able to)"
	// What the agent cannot do without the human. Not run, build, test or
	// verify: "I could not run the tests here" is an honest report of
	// what was not checked, not a blockage.
	blockers = "(connect|authenticate|reach|log in|sign in|get access|push|deploy)"
	// First person, for reports of what the agent did.
	firstPerson = "(i|we|i've|we've|i have|we have)"
	// Subjects of "… pass". An inline code span ("`go test ./...` passes")
	// takes its scope from the command.
	det          = "(all |all the |the |all of the |)"
	testSubjects = det +
		"(tests|test|specs|spec|checks|suite|suites|test suite|unit tests|integration tests|e2e tests|ci|pipeline|benchmarks|<code>)"
	buildSubj = "(the |)(build|builds)"
	lintSubj  = "(the |)(lint|linter|linters|linting|vet|go vet|golangci-lint|eslint|clippy|ruff|mypy|staticcheck|typecheck|type check|gofmt|formatting|format check)"
	passes    = "(now |all |also |still |)(pass|passes|passed|passing|succeed|succeeds|succeeded)"
	// Where a deploy goes, and where a merge goes.
	deployTargets = "(production|prod|staging|the staging environment|the production environment|live|npm|pypi|crates.io|docker hub|dockerhub|the registry|ghcr|the app store|the play store|kubernetes|k8s|the cluster|vercel|netlify|heroku|fly.io)"
	mergeTargets  = "(main|master|trunk|develop|the main branch|the default branch|the master branch|origin|origin/main|origin/master|upstream|the remote|the repo|the repository)"
	// What was deployed or merged.
	deployObjects = "(it |them |this |the fix |the change |the changes |the release |the build |the app |the service |the site |the image |the package |the chart |the docs |the new version |version <ver> |<ver> |)"
	mergeObjects  = "(it |them |this |the fix |the change |the changes |the pr |the pull request |the branch |my changes |my branch |the commit |the commits |everything |)"
)

// english is the reviewed English table. Add a row to extend it; the tests
// in phrase_test.go show what each kind must and must not match.
var english = withEnglishGrammar(langSpec{
	tag:   "en",
	rules: append(append(append(englishWork, englishScoped...), englishScoped2...), englishBlockedDelegation...),
})

// withEnglishGrammar gives a table English's cancelling words: negators,
// hypotheticals, imperatives, linking words and their suffixes.
func withEnglishGrammar(l langSpec) langSpec {
	l.negators, l.hypotheticals, l.hypotheticalPairs = englishNegators, englishHypotheticals, englishHypotheticalPairs
	l.imperatives, l.leadIns, l.conjunctions, l.linking = englishImperatives, englishLeadIns, englishConjunctions, englishLinking
	l.negSuffixes, l.hypSuffixes, l.linkSuffixes = "n't", "'ll 'd", "'s 're 'm 've"
	return l
}

// englishWork: the work is finished, fixed or working.
var englishWork = []rule{
	{kind: KindDone, phrase: "done", predicate: true, unless: "what how",
		notBefore: describing + " so to when if once differently"},
	{kind: KindDone, phrase: "complete", predicate: true},
	{kind: KindDone, phrase: "(completed|finished|shipped)", notAfter: determiners},
	{kind: KindDone, phrase: "fixed", notAfter: determiners,
		notBefore: "point size sizes width length number rate delay timeout interval format seed amount offset price cost order set window"},
	{kind: KindDone, phrase: "implemented", notAfter: determiners, notBefore: describing + " with here there"},
	{kind: KindDone, phrase: "resolved", notAfter: determiners, notBefore: describing + " to relative from against when"},
	{kind: KindDone, phrase: "verified", notAfter: determiners, notBefore: "by via against when if before after at"},
	{kind: KindDone, phrase: "successfully"},
	{kind: KindDone, phrase: "(it|this|that|everything|fix|change|patch) (now |also |)(works|worked)",
		notAfter: "how way what where why", notBefore: "by like as via through on with differently similarly the for in when if"},
	{kind: KindDone, phrase: "(works|working|worked) (now|again|correctly|fine|perfectly|as expected|as intended)"},
	{kind: KindDone, phrase: "(now|is|are|it's|everything's|that's) working",
		notBefore: "on with through to towards toward for against around in as"},
	{kind: KindDone, phrase: "ready (to|for) (merge|ship|deploy|release|review|go|production|use|land)"},
	{kind: KindDone, phrase: "all set", predicate: true, notBefore: "to for up"},
	{kind: KindDone, phrase: "good to go", notBefore: "to for"},
	{kind: KindDone, phrase: "(has|have|is|are|was|were) (now |)(been |)(addressed|taken care of|sorted out)"},
	{kind: KindDone, phrase: "(fix|fixes|change|changes|patch|patches) (is|are) (now |)in place"},
}

// englishScoped: done phrases about one kind of evidence.
var englishScoped = []rule{
	// tests
	{kind: KindDone, scope: ScopeTests, phrase: testSubjects + " " + passes},
	{kind: KindDone, scope: ScopeTests, phrase: testSubjects + " (is|are|was|were) (now |all |still |)(passing|green|clean)"},
	{kind: KindDone, scope: ScopeTests, phrase: "(all|everything|they) (now |all |still |)(pass|passes|passed|passing|green)"},
	{kind: KindDone, scope: ScopeTests, phrase: "(everything|everything's|it's|that's) (now |)(passing|green)"},
	{kind: KindDone, scope: ScopeTests, phrase: "(ci|the pipeline|pipeline|checks|tests) (now |all |)green", predicate: true},
	{kind: KindDone, scope: ScopeTests, phrase: "(0|zero) (failures|failed|failing)"},
	{kind: KindDone, scope: ScopeTests, phrase: "<n/n> (tests |specs |checks |test cases |)(passed|passing|pass|succeeded|green|ok)"},
	{kind: KindDone, scope: ScopeTests, phrase: "<num> (tests |specs |checks |test cases |)(passed|passing)", noFailure: true},
	// build
	{kind: KindDone, scope: ScopeBuild, phrase: buildSubj + " " + passes},
	{kind: KindDone, scope: ScopeBuild, phrase: buildSubj + " (is|was) (now |still |)(passing|green|clean|successful)"},
	{kind: KindDone, scope: ScopeBuild, phrase: "(build|compilation) (successful|succeeded)"},
	{kind: KindDone, scope: ScopeBuild,
		phrase: "(compiles|builds|compiled|built) (cleanly|successfully|fine|now|without errors|without warnings)"},
	{kind: KindDone, scope: ScopeBuild, predicate: true,
		phrase: "(it|this|that|everything|the code|the project|the binary|the module|the package|the crate|the app) " +
			"(now |also |still |)(compiles|builds)"},
	{kind: KindDone, scope: ScopeBuild, phrase: "(no|zero|0) (compile|compilation|build|compiler) errors"},
	// lint
	{kind: KindDone, scope: ScopeLint, phrase: lintSubj + " " + passes},
	{kind: KindDone, scope: ScopeLint,
		phrase: lintSubj + " (is|are|was|were|comes back|came back) (now |still |)(passing|green|clean|happy)"},
	{kind: KindDone, scope: ScopeLint,
		phrase: "(no|zero|0) (lint|linter|vet|type|typecheck|type-check|typing|formatting|format|style|eslint|clippy|mypy|staticcheck) " +
			"(errors|warnings|issues|findings|complaints|problems|violations)"},
	{kind: KindDone, scope: ScopeLint, predicate: true,
		phrase: "(it|this|that|everything|the code|the project) (now |also |still |)(type-checks|typechecks)"},
	{kind: KindDone, scope: ScopeLint, phrase: "(type-checks|typechecks) (cleanly|fine|now|without errors)"},
	{kind: KindDone, scope: ScopeLint, phrase: "(is|are) (now |properly |correctly |)(formatted|gofmt'd|gofmt-clean|lint-clean|lint-free)",
		final: true},
	{kind: KindDone, scope: ScopeLint,
		phrase: firstPerson + " (also |)(formatted|reformatted|gofmt'd) (the code|the files|everything|it|the changes|the project)"},
	// deploy
	{kind: KindDone, scope: ScopeDeploy,
		phrase:   "(deployed|released|published|rolled out|shipped|pushed) " + deployObjects + "(to|into|in|on) " + deployTargets,
		notAfter: determiners + " be been"},
	{kind: KindDone, scope: ScopeDeploy,
		phrase:    "(is|are|was|were|has been|have been|it's|now) (now |successfully |)(deployed|released|published|rolled out)",
		notBefore: describing + " automatically when whenever once after on"},
	{kind: KindDone, scope: ScopeDeploy,
		phrase: firstPerson + " (just |now |also |successfully |)(deployed|released|published|rolled out)"},
	{kind: KindDone, scope: ScopeDeploy, phrase: "(deployed|released|published|rolled out) successfully"},
	{kind: KindDone, scope: ScopeDeploy, phrase: "(released|published) (<ver>|version <ver>)", notAfter: determiners + " be been"},
	{kind: KindDone, scope: ScopeDeploy, phrase: "(is|are|it's|now|went|has gone) (now |)live", final: true, endOr: "in on at again for"},
	{kind: KindDone, scope: ScopeDeploy, phrase: "(is|are|it's) (now |)up and running"},
	// merge
	{kind: KindDone, scope: ScopeMerge, phrase: "(merged|landed|pushed) " + mergeObjects + "(to|into|onto|in) " + mergeTargets,
		notAfter: determiners + " be been"},
	{kind: KindDone, scope: ScopeMerge,
		phrase: "(the pr|the pull request|the branch|the change|the fix|it|pr <ref>|<ref>) (is|was|has been|got) (now |)(merged|landed)"},
	{kind: KindDone, scope: ScopeMerge, phrase: firstPerson + " (just |now |also |)(merged|pushed|landed) " +
		"(it|the fix|the change|the changes|the pr|the pull request|the branch|my changes|the commit|the commits|<ref>|pr <ref>)",
		notBefore: "to into onto in"},
}

// englishScoped2: more done phrases about one kind of evidence.
var englishScoped2 = []rule{
	// fetch
	{kind: KindDone, scope: ScopeFetch,
		phrase: "(the endpoint|endpoint|the url|the api|the server|the service|the site|the page|the health check|the healthcheck|" +
			"the health endpoint|it|the request|curl) (now |)(returns|returned|responds with|responded with|answers with|answered with|gives|gave) " +
			"(200|http 200|a 200|200 ok|status 200|a 200 ok|http 200 ok)",
		notBefore: "when if for on unless only whenever after once"},
	{kind: KindDone, scope: ScopeFetch, phrase: "(is|are|it's|now) (now |again |)(reachable|responding)", final: true,
		endOr: "again now from at on over via"},
	{kind: KindDone, scope: ScopeFetch, phrase: firstPerson + " (successfully |)(fetched|downloaded|retrieved)"},
	// perf
	{kind: KindDone, scope: ScopePerf,
		phrase: "(<pct>|<mult>) (faster|quicker|speedup|speed-up|less time|less memory|fewer allocations|less cpu|lower latency|improvement|reduction)"},
	{kind: KindDone, scope: ScopePerf,
		phrase: "(reduced|cut|lowered|improved|decreased|dropped|sped up|brought down) (the |p99 |p95 |p50 |median |mean |average |tail |)" +
			"(latency|runtime|run time|build time|memory usage|memory|allocations|cpu usage|cpu time|cpu|execution time|response time|" +
			"startup time|test time|throughput) by"},
	{kind: KindDone, scope: ScopePerf, phrase: "(speedup|speed-up) of (<mult>|<pct>)"},
	// coverage
	{kind: KindDone, scope: ScopeCoverage,
		phrase: "(coverage|test coverage|line coverage|branch coverage|statement coverage|code coverage) " +
			"(is|was|is now|now|is at|now at|reached|reaches|increased to|rose to|went up to|stands at) <pct>",
		unless: "aim aims target targets require requires required requirement threshold minimum least goal"},
	{kind: KindDone, scope: ScopeCoverage, phrase: "<pct> (test |line |branch |statement |code |)coverage",
		unless: "aim aims target targets require requires required requirement threshold minimum least goal at"},
	// security
	{kind: KindDone, scope: ScopeSecurity,
		phrase: "no (known |open |new |)(vulnerabilities|vulns|cves|security issues|security vulnerabilities|security findings|" +
			"vulnerable dependencies)"},
	{kind: KindDone, scope: ScopeSecurity, phrase: "(0|zero) (vulnerabilities|vulns|cves|security issues|security findings)"},
	{kind: KindDone, scope: ScopeSecurity,
		phrase: "(govulncheck|trivy|snyk|npm audit|cargo audit|pip-audit|gosec|bandit|semgrep|codeql|grype|the security scan|" +
			"security scan|the scan|the audit|the vulnerability scan) (is|was|came back|comes back|reports|reported|found|finds|shows|showed) " +
			"(clean|nothing|no issues|no vulnerabilities|no findings|no problems)"},
	{kind: KindDone, scope: ScopeSecurity, phrase: "(govulncheck|trivy|snyk|gosec|the security scan|security scan) " + passes},
	// deps
	{kind: KindDone, scope: ScopeDeps,
		phrase: "(bumped|upgraded|updated|pinned) (<any> |<any> <any> |<any> <any> <any> )(to|from <ver> to) <ver>",
		notIn:  "version release docs documentation changelog readme"},
	{kind: KindDone, scope: ScopeDeps,
		phrase: "(dependencies|deps|the dependencies|the deps|go.mod|package.json|the lockfile) " +
			"(are |were |have been |has been |is |was |)(now |)(updated|upgraded|bumped)",
		notBefore: describing + " automatically weekly daily regularly when"},
	{kind: KindDone, scope: ScopeDeps,
		phrase:   "(updated|upgraded|bumped) (all |the |all the |all of the |our |)(dependencies|deps|go modules|npm packages|the lockfile|crates)",
		notAfter: determiners},
	// migration
	{kind: KindDone, scope: ScopeMigration,
		phrase: "(the |all |all the |)(migration|migrations|db migration|db migrations|database migration|database migrations|" +
			"schema migration|schema migrations) (has |have |was |were |)(been |)(now |successfully |)" +
			"(applied|ran|executed|completed|succeeded|went through)",
		notBefore: describing + " during when automatically"},
	{kind: KindDone, scope: ScopeMigration,
		phrase: "(applied|ran|executed) (the |all the |all |both |)(migration|migrations|db migration|db migrations|database migration|" +
			"database migrations|schema migration|schema migrations)"},
	{kind: KindDone, scope: ScopeMigration, phrase: "migrated the (database|db|schema|data|tables)"},
	// change: only first-person reports of a finished edit, and a bare past
	// verb opening a sentence (a list item: "Updated `x.go`").
	{kind: KindDone, scope: ScopeChange,
		phrase: firstPerson + " (also |just |now |)(updated|changed|edited|modified|rewrote|rewritten|refactored|renamed|deleted|removed|" +
			"created|added) (the |)(<file>|<code>)"},
	{kind: KindDone, scope: ScopeChange, phrase: "(updated|changed|edited|modified) (the |)(<file>|<code>)", first: true},
	{kind: KindDone, scope: ScopeChange, phrase: "(<file>|<code>) (was|were|has been|have been|is now) (updated|changed|edited|modified)",
		notBefore: describing + " automatically when whenever"},
}

// englishBlockedDelegation: blockage and requests.
var englishBlockedDelegation = []rule{
	// blocked: the agent cannot go on by itself.
	{kind: KindBlocked, phrase: "blocked (by|on)"},
	{kind: KindBlocked,
		phrase: "(i'm|i am|we're|we are|i was|we were|i've been|we've been|i remain|we remain) (still |currently |now |)(blocked|stuck)"},
	{kind: KindBlocked, phrase: "(cannot|can't|can not|unable to|couldn't|could not) (proceed|continue)"},
	{kind: KindBlocked, phrase: cannot + " " + blockers},
	{kind: KindBlocked, phrase: cannotShort + " " + blockers},
	{kind: KindBlocked,
		phrase: "(i|we) (don't|do not|didn't|did not) have (access|permission|permissions|credentials|the credentials|the permissions|" +
			"rights|the rights|write access|read access)"},
	{kind: KindBlocked, phrase: "(i|we) (have|had) no (access|permission|permissions|credentials)"},

	// delegation: the agent asks the human to do or provide something.
	{kind: KindDelegation, phrase: "need you to"},
	{kind: KindDelegation, phrase: "(please|could you|can you|would you|could you please|can you please|would you please) " + asks},
	{kind: KindDelegation, phrase: "(send|forward) (me|us)"},
	{kind: KindDelegation, phrase: "provide (me|us) with"},
	{kind: KindDelegation, phrase: "(you'll|you will) (need|have) to"},
	{kind: KindDelegation,
		phrase: "(i|we) (need|require) your (approval|input|confirmation|decision|help|credentials|password|token|key|permission|access)"},
	{kind: KindDelegation, phrase: "waiting (for|on) (you|your)"},
	{kind: KindDelegation, phrase: cannot + " (access|fetch|download|retrieve|open|view|read)"},
	{kind: KindDelegation, phrase: cannotShort + " (access|fetch|download|retrieve|open|view|read)"},
}

// English words that cancel a phrase when they come before it in the same
// clause, within window words.
const (
	// negators cancel every kind ("not done", "no tests pass"); so does any
	// word ending in n't.
	englishNegators = "not no never none nothing nobody neither nor without cannot hardly barely almost nearly partially partly mostly half"
	// hypotheticals cancel done and blocked ("once it's done", "if I can't
	// access it", "this will be fixed"); so do words ending in 'll or 'd. A
	// conditional request is still a request, so they do not cancel
	// delegation.
	// So do verbs that describe what a test or check does ("the test
	// checks that the build passes").
	englishHypotheticals = "if once when whenever until unless whether before after till will would shall might may going want wants " +
		"wanted hope expect assuming assume suppose supposed ensure ensures let's checks verifies asserts validates"
	// hypotheticalPairs are two-word hypotheticals and intentions ("needs
	// to be fixed", "let me check it works", "to verify the fix works").
	englishHypotheticalPairs = "to be|to get|can be|could be|need to|needs to|have to|has to|make sure|makes sure|making sure|" +
		"to verify|to confirm|to check|to ensure|to see|to test|let me|let us"
	// imperatives at the start of a clause tell the reader what to do
	// ("verify that all tests pass"); later in a clause they are reports
	// ("I can verify that all tests pass" is not cancelled).
	englishImperatives = "check confirm verify test see run try ensure make"
	// leadIns may come before an imperative at the start of a clause.
	englishLeadIns = "please then just also now simply first next"
	// conjunctions start a new clause ("I didn't touch the API, and all
	// tests pass").
	englishConjunctions = "and but so then because since although though while whereas however therefore thus which"
	// linking words make the next word a predicate ("it is done", "all
	// done"); so do words ending in 's, 're, 'm or 've.
	englishLinking = "is are was were am be been being now all fully finally already completely totally entirely basically have has had " +
		"looks look seems seem"
)
