package command

import (
	"strings"
	"testing"
)

// TestSelectionCovers reads each runner's selection from a command line
// and checks it against a test the prompt named (runner "") or a runner
// reported, and against a test file the session changed.
func TestSelectionCovers(t *testing.T) {
	for _, tt := range []struct {
		line, runDir, dir string
		test              TestID
		dirOK, testOK     bool
	}{
		// go test: packages and -run/-skip
		{"go test ./...", "/repo", "/repo/internal/add", TestID{Name: "TestAdd"}, true, true},
		{"go test .", "/repo", "/repo/internal/add", TestID{Name: "TestAdd"}, false, true},
		{"go test", "/repo/internal/add", "/repo/internal/add", TestID{Name: "TestAdd"}, true, true},
		{"go test ./other/...", "/repo", "/repo/internal/add", TestID{Name: "TestAdd"}, false, true},
		{"go test ./internal/...", "/repo", "/repo/internal/add", TestID{Name: "TestAdd"}, true, true},
		{"go test example.com/add", "/repo", "/repo/internal/add", TestID{Name: "TestAdd"}, true, true},
		{"go test -run TestSub ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, false},
		{"go test -run TestSub ./...", "/repo", "/repo", TestID{Runner: RunnerGo, Name: "TestAdd"}, true, false},
		{"go test -run TestSub ./...", "/repo", "/repo", TestID{Runner: RunnerCargo, Name: "TestAdd"}, true, true},
		{"go test -run 'TestAdd$' ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, true},
		{"go test -run=TestA/zero ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, true},
		{"go test -skip TestAdd ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, false},
		{"go test -run '(' ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, true},
		{"go test -count 1 -run TestAdd ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, true},
		{"timeout 60 go test -run TestSub ./...", "/repo", "/repo", TestID{Name: "TestAdd"}, true, false},
		// pytest: paths, nodes and -k
		{"pytest", "/repo", "", TestID{Name: "tests/test_x.py::test_parse"}, true, true},
		{"pytest tests/test_y.py", "/repo", "", TestID{Name: "tests/test_x.py::test_parse"}, true, false},
		{"pytest tests/test_y.py", "/repo", "", TestID{Runner: RunnerPytest, File: "tests/test_x.py", Name: "test_parse"}, true, false},
		{"pytest tests", "/repo", "", TestID{Name: "tests/test_x.py::test_parse"}, true, true},
		{"pytest tests/test_x.py::test_other", "/repo", "", TestID{Name: "tests/test_x.py::test_parse"}, true, false},
		{"pytest -k other", "/repo", "", TestID{Name: "test_parse"}, true, false},
		{"pytest -k 'parse or other'", "/repo", "", TestID{Name: "test_parse"}, true, true},
		{"pytest -k 'not slow'", "/repo", "", TestID{Name: "test_parse"}, true, true},
		{"python -m pytest -k other", "/repo", "", TestID{Name: "test_parse"}, true, false},
		// jest: path patterns (regular expressions), -t on the full name
		{"npx jest", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, true},
		{"npx jest src/other", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, false},
		{"npx jest 'sum\\.test'", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, true},
		{"jest -t 'math subtracts'", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, false},
		{"jest --testNamePattern=adds", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, true},
		{"jest --testPathIgnorePatterns sum", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, false},
		{"jest '^/repo/src'", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, true},
		{"jest --onlyChanged", "/repo", "", TestID{Runner: RunnerJest, File: "src/sum.test.js", Name: "math adds"}, true, true},
		{"jest -t other", "/repo", "", TestID{Name: "TestAdd"}, true, true},
		{"npm test -- -t other", "/repo", "/repo/x", TestID{Name: "TestAdd"}, true, true},
		// vitest: path filters (substrings), -t
		{"npx vitest run", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, true},
		{"npx vitest run src/other", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, false},
		{"npx vitest run sum", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, true},
		{"npx vitest run src/sum.test.ts:12", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, true},
		{"vitest -t subtracts", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, false},
		{"vitest related src/sum.ts", "/repo", "", TestID{Runner: RunnerVitest, File: "src/sum.test.ts", Name: "math adds"}, true, true},
		// cargo test: name filters, --exact, --skip
		{"cargo test", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, true},
		{"cargo test parser", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, true},
		{"cargo test lexer", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, false},
		{"cargo test -p core -- lexer parser", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, true},
		{"cargo test -- --exact parser", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, false},
		{"cargo test -- --exact parser::tests::empty", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, true},
		{"cargo test -- --skip empty", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, false},
		{"cargo test parse", "/repo", "", TestID{Name: "test_parse"}, true, true},
		{"cargo test lexer", "/repo", "", TestID{Name: "test_parse"}, true, false},
		{"cargo test -- --ignored", "/repo", "", TestID{Runner: RunnerCargo, Name: "parser::tests::empty"}, true, true},
		// maven -Dtest: classes (any package), #methods, exclusions
		{"mvn test", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, true},
		{"mvn test -Dtest=CalcTest", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, true},
		{"mvn test -Dtest=OtherTest", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, false},
		{"mvn test -Dtest='CalcTest#testSub'", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, false},
		{"mvn test -Dtest='CalcTest#testSub+testAdd'", "/repo", "", TestID{Runner: RunnerMaven, Name: "CalcTest.testAdd"}, true, true},
		{"./mvnw -Dtest='Calc*,Other' test", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, true},
		{"mvn test -Dtest='!CalcTest'", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, false},
		{"mvn test -Dtest=com.example.CalcTest", "/repo", "", TestID{Runner: RunnerMaven, Name: "CalcTest.testAdd"}, true, true},
		{"mvn test -Dtest=com.other.CalcTest", "/repo", "", TestID{Runner: RunnerMaven, Name: "com.example.CalcTest.testAdd"}, true, false},
		// gradle --tests: globs over class and method
		{"./gradlew test", "/repo", "", TestID{Runner: RunnerGradle, Name: "com.example.CalcTest.testAdd"}, true, true},
		{"./gradlew test --tests CalcTest", "/repo", "", TestID{Runner: RunnerGradle, Name: "com.example.CalcTest.testAdd"}, true, true},
		{"./gradlew test --tests 'com.example.*'", "/repo", "", TestID{Runner: RunnerGradle, Name: "CalcTest.testAdd"}, true, true},
		{"gradle test --tests '*OtherTest'", "/repo", "", TestID{Runner: RunnerGradle, Name: "com.example.CalcTest.testAdd"}, true, false},
		{"gradle test --tests CalcTest.testSub", "/repo", "", TestID{Runner: RunnerGradle, Name: "com.example.CalcTest.testAdd"}, true, false},
		{"gradle test --tests CalcTest.testSub --tests '*testAdd'", "/repo", "", TestID{Runner: RunnerGradle, Name: "com.example.CalcTest.testAdd"}, true, true},
	} {
		t.Run(tt.line, func(t *testing.T) {
			s := SelectionOf(Parse(tt.line)[0].Argv)
			if tt.dir != "" {
				if got := s.CoversDir(tt.dir, tt.runDir); got != tt.dirOK {
					t.Errorf("CoversDir(%s) = %v", tt.dir, got)
				}
			}
			if got := s.CoversTest(tt.test); got != tt.testOK {
				t.Errorf("CoversTest(%+v) = %v (selection %+v)", tt.test, got, s)
			}
		})
	}
}

// TestSelectionCoversFile: a test file the session changed must be run.
func TestSelectionCoversFile(t *testing.T) {
	for _, tt := range []struct {
		line, runDir, file string
		want               bool
	}{
		{"go test ./...", "/repo", "/repo/add/add_test.go", true},
		{"go test ./sub/...", "/repo", "/repo/add/add_test.go", false},
		{"pytest", "/repo", "/repo/tests/test_x.py", true},
		{"pytest tests/test_x.py::test_a", "/repo", "/repo/tests/test_x.py", true},
		{"pytest tests", "/repo", "/repo/tests/test_x.py", true},
		{"pytest tests/test_y.py", "/repo", "/repo/tests/test_x.py", false},
		{"pytest /repo/tests", "/elsewhere", "/repo/tests/test_x.py", true},
		{"npx jest", "/repo", "/repo/src/sum.test.js", true},
		{"npx jest src/other", "/repo", "/repo/src/sum.test.js", false},
		{"npx jest sum", "/repo", "/repo/src/sum.test.js", true},
		{"jest --testPathIgnorePatterns sum", "/repo", "/repo/src/sum.test.js", false},
		{"vitest run other", "/repo", "/repo/src/sum.test.ts", false},
		{"vitest run src/sum", "/repo", "/repo/src/sum.test.ts", true},
		{"cargo test", "/repo", "/repo/tests/parse.rs", true},
		{"cargo test --lib", "/repo", "/repo/tests/parse.rs", false},
		{"cargo test --test parse", "/repo", "/repo/tests/parse.rs", true},
		{"cargo test --test lex", "/repo", "/repo/tests/parse.rs", false},
		{"cargo test --tests", "/repo", "/repo/crates/a/tests/parse/main.rs", true},
		{"cargo test --test parse", "/repo", "/repo/crates/a/tests/parse/main.rs", true},
		{"mvn test -Dtest=CalcTest", "/repo", "/repo/src/test/java/com/example/CalcTest.java", true},
		{"mvn test -Dtest=OtherTest", "/repo", "/repo/src/test/java/com/example/CalcTest.java", false},
		{"mvn test -Dtest='CalcTest#testAdd'", "/repo", "/repo/src/test/java/com/example/CalcTest.java", true},
		{"gradle test --tests 'com.example.CalcTest.testAdd'", "/repo", "/repo/src/test/java/com/example/CalcTest.java", true},
		{"gradle test --tests 'com.other.*'", "/repo", "/repo/src/test/java/com/example/CalcTest.java", false},
		{"make test", "/repo", "/repo/src/sum.test.js", true},
		{"go test ./sub/...", "", "/repo/add/add_test.go", true},
	} {
		t.Run(tt.line+" "+tt.file, func(t *testing.T) {
			s := SelectionOf(Parse(tt.line)[0].Argv)
			if got := s.CoversFile(tt.file, tt.runDir); got != tt.want {
				t.Errorf("CoversFile(%s, %s) = %v (selection %+v)", tt.file, tt.runDir, got, s)
			}
		})
	}
}

func FuzzSelection(f *testing.F) {
	for _, s := range []string{"go test -run 'A|B' -skip C ./...", "pytest -k 'a or b' tests/x.py::t", "go test ./a/... ./b",
		"npx jest -t 'a b' src", "vitest run x -t y", "cargo test a -- --exact --skip b", "mvn -Dtest='A#b+c,!D' test",
		"gradle test --tests 'com.*.A'"} {
		f.Add(s, "TestAdd", "/repo/a")
	}
	f.Fuzz(func(t *testing.T, line, test, dir string) {
		for _, c := range Parse(line) {
			s := SelectionOf(c.Argv)
			for _, r := range []string{"", RunnerGo, RunnerPytest, RunnerJest, RunnerVitest, RunnerCargo, RunnerMaven, RunnerGradle} {
				id := TestID{Runner: r, Name: test, File: dir}
				if !s.Known && (!s.CoversTest(id) || !s.CoversDir(dir, "/repo") || !s.CoversFile(dir, "/repo")) {
					t.Fatal("an unknown selection must cover everything")
				}
				if r != "" && s.Runner != r && !s.CoversTest(id) {
					t.Fatalf("%q judged a test %s reported", line, r)
				}
			}
			if strings.HasPrefix(line, "go test ./... ") && s.Known && s.Run == "" && s.Skip == "" && !s.CoversTest(TestID{Name: test}) {
				t.Fatalf("an unfiltered go test does not cover %q", test)
			}
		}
	})
}
