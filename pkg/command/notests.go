package command

import (
	"slices"
	"strings"
)

// NoTests says why prog, a program and its arguments as Call.Programs
// gives them, runs no test although it invokes a test runner: it only lists
// the tests, collects them, prints what it would do, compiles them, selects
// none, or skips them. It returns "" when prog may run tests (or is not a
// test runner). The reasons name the option, so that a verdict can say what
// to drop.
func NoTests(prog []string) string {
	if len(prog) == 0 {
		return ""
	}
	name, args := baseName(prog[0]), prog[1:]
	switch name {
	case "go":
		if len(args) > 0 && args[0] == "test" {
			return goTestNoTests(args[1:])
		}
	case "pytest", "py.test":
		return flagReason(args, map[string]string{
			"--collect-only": "only collects the tests", "--co": "only collects the tests",
			"--setup-plan": "only shows the fixtures' setup plan", "--fixtures": "only lists the fixtures",
			"--fixtures-per-test": "only lists the fixtures", "--markers": "only lists the markers",
			"--version": "only prints the version", "--help": "only prints the help", "-h": "only prints the help",
		})
	case "jest":
		return flagReason(args, jestFlags)
	case "vitest":
		if len(args) > 0 && args[0] == "list" {
			return "`vitest list` only lists the tests"
		}
		return flagReason(args, map[string]string{"--version": "only prints the version", "--help": "only prints the help"})
	case "cargo":
		return cargoNoTests(args)
	case "mvn", "mvnw", "./mvnw":
		return mavenNoTests(args)
	case "gradle", "gradlew", "./gradlew":
		return gradleNoTests(args)
	case "make", "gmake", "just":
		return flagReason(args, map[string]string{
			"-n": "only prints the commands (dry run)", "--dry-run": "only prints the commands (dry run)",
			"--just-print": "only prints the commands (dry run)", "--recon": "only prints the commands (dry run)",
			"-q": "only asks whether the target is up to date", "--question": "only asks whether the target is up to date",
		})
	case "npm", "pnpm", "yarn", "bun":
		// Options after `--` go to the script's runner.
		if i := slices.Index(args, "--"); i >= 0 {
			return flagReason(args[i+1:], jestFlags, map[string]string{
				"--collect-only": "only collects the tests", "--co": "only collects the tests", "--list": "only lists the tests",
			})
		}
	}
	return ""
}

var jestFlags = map[string]string{
	"--listTests": "only lists the test files", "--showConfig": "only prints the configuration",
	"--version": "only prints the version", "--help": "only prints the help",
}

// flagReason returns "`flag` <reason>" for the first argument (or
// --flag=value) found in one of the tables.
func flagReason(args []string, tables ...map[string]string) string {
	for _, a := range args {
		key, _, _ := strings.Cut(a, "=")
		for _, t := range tables {
			if why, ok := t[key]; ok {
				return "`" + key + "` " + why
			}
		}
	}
	return ""
}

// goTestNoTests reads go test's own flags (those before the packages'
// -args): -list, -c, -n, and a -run that matches no name.
func goTestNoTests(args []string) string {
	if i := slices.Index(args, "-args"); i >= 0 {
		args = args[:i]
	}
	for i := 0; i < len(args); i++ {
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		flag = strings.TrimPrefix(flag, "-")
		switch flag {
		case "list":
			return "`-list` only lists the tests"
		case "c":
			return "`-c` only compiles the test binary"
		case "n":
			return "`-n` only prints the commands (dry run)"
		case "run":
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			if matchesNothing(value) {
				return "`-run " + value + "` selects no test"
			}
		}
	}
	return ""
}

// matchesNothing reports a -run pattern that cannot match a test name: the
// empty-name anchors go's own documentation uses to run only benchmarks.
func matchesNothing(pattern string) bool {
	switch pattern {
	case "^$", "^$/^$", "$^", "NONE", "XXX", "^#":
		return true
	}
	return false
}

func cargoNoTests(args []string) string {
	if len(args) == 0 || args[0] != "test" && args[0] != "nextest" {
		return ""
	}
	rest := args[1:]
	if args[0] == "nextest" {
		if len(rest) > 0 && rest[0] == "list" {
			return "`cargo nextest list` only lists the tests"
		}
		return ""
	}
	if i := slices.Index(rest, "--"); i >= 0 {
		if why := flagReason(rest[i+1:], map[string]string{"--list": "only lists the tests"}); why != "" {
			return why
		}
		rest = rest[:i]
	}
	return flagReason(rest, map[string]string{"--no-run": "only compiles the tests"})
}

func mavenNoTests(args []string) string {
	for _, a := range args {
		switch a {
		case "-DskipTests", "-DskipTests=true", "-Dmaven.test.skip=true", "-Dmaven.test.skip":
			return "`" + a + "` skips the tests"
		}
	}
	return ""
}

func gradleNoTests(args []string) string {
	for i, a := range args {
		switch {
		case a == "-m" || a == "--dry-run":
			return "`" + a + "` only prints the tasks (dry run)"
		case (a == "-x" || a == "--exclude-task") && i+1 < len(args) && (args[i+1] == "test" || strings.HasSuffix(args[i+1], ":test")):
			return "`" + a + " " + args[i+1] + "` excludes the tests"
		}
	}
	return ""
}

// NoTestsParsed returns NoTests for the first program in calls that runs
// want (as RunsParsed matches it), or "".
func NoTestsParsed(calls []Call, want []string) string {
	for _, c := range calls {
		for _, prog := range c.Programs() {
			if len(want) > 0 && hasPrefix(prog, want) {
				return NoTests(prog)
			}
		}
	}
	return ""
}
