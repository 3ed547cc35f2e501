package command

import (
	"strings"
	"testing"
)

func TestSelectionCovers(t *testing.T) {
	for _, tt := range []struct {
		line, runDir, dir, test string
		dirOK, testOK           bool
	}{
		{"go test ./...", "/repo", "/repo/internal/add", "TestAdd", true, true},
		{"go test .", "/repo", "/repo/internal/add", "TestAdd", false, true},
		{"go test", "/repo/internal/add", "/repo/internal/add", "TestAdd", true, true},
		{"go test ./other/...", "/repo", "/repo/internal/add", "TestAdd", false, true},
		{"go test ./internal/...", "/repo", "/repo/internal/add", "TestAdd", true, true},
		{"go test example.com/add", "/repo", "/repo/internal/add", "TestAdd", true, true},
		{"go test -run TestSub ./...", "/repo", "/repo", "TestAdd", true, false},
		{"go test -run 'TestAdd$' ./...", "/repo", "/repo", "TestAdd", true, true},
		{"go test -run=TestA/zero ./...", "/repo", "/repo", "TestAdd", true, true},
		{"go test -skip TestAdd ./...", "/repo", "/repo", "TestAdd", true, false},
		{"go test -run '(' ./...", "/repo", "/repo", "TestAdd", true, true},
		{"go test -count 1 -run TestAdd ./...", "/repo", "/repo", "TestAdd", true, true},
		{"pytest", "/repo", "", "tests/test_x.py::test_parse", true, true},
		{"pytest tests/test_y.py", "/repo", "", "tests/test_x.py::test_parse", true, false},
		{"pytest tests", "/repo", "", "tests/test_x.py::test_parse", true, true},
		{"pytest tests/test_x.py::test_other", "/repo", "", "tests/test_x.py::test_parse", true, false},
		{"pytest -k other", "/repo", "", "test_parse", true, false},
		{"pytest -k 'parse or other'", "/repo", "", "test_parse", true, true},
		{"pytest -k 'not slow'", "/repo", "", "test_parse", true, true},
		{"npm test -- -t other", "/repo", "/repo/x", "TestAdd", true, true},
	} {
		t.Run(tt.line, func(t *testing.T) {
			s := SelectionOf(Parse(tt.line)[0].Argv)
			if tt.dir != "" {
				if got := s.CoversDir(tt.dir, tt.runDir); got != tt.dirOK {
					t.Errorf("CoversDir(%s) = %v", tt.dir, got)
				}
			}
			if got := s.CoversTest(tt.test); got != tt.testOK {
				t.Errorf("CoversTest(%s) = %v", tt.test, got)
			}
		})
	}
}

func FuzzSelection(f *testing.F) {
	for _, s := range []string{"go test -run 'A|B' -skip C ./...", "pytest -k 'a or b' tests/x.py::t", "go test ./a/... ./b"} {
		f.Add(s, "TestAdd", "/repo/a")
	}
	f.Fuzz(func(t *testing.T, line, test, dir string) {
		for _, c := range Parse(line) {
			s := SelectionOf(c.Argv)
			_ = s.CoversTest(test)
			_ = s.CoversDir(dir, "/repo")
			if !s.Known && (!s.CoversTest(test) || !s.CoversDir(dir, "/repo")) {
				t.Fatal("an unknown selection must cover everything")
			}
			if strings.HasPrefix(line, "go test ./... ") && s.Known && s.Run == "" && s.Skip == "" && !s.CoversTest(test) {
				t.Fatalf("an unfiltered go test does not cover %q", test)
			}
		}
	})
}
