// Package contract derives, from the text of a user prompt, what the prompt
// asks for: whether it is actionable (it contains an action verb), its
// objective, the structured target fields that claim arguments must bind to
// (paths, URLs, command hints, backtick tokens, keywords), the capability
// ladder a "blocked" claim must have exhausted, and the verification expected
// before "done". Derivation is deterministic and pure: the same prompt always
// gives the same contract (golden files in testdata/ pin it).
package contract

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/claimcheck/claimcheck/pkg/digest"
	"github.com/claimcheck/claimcheck/schemas"
)

// Deriver names this derivation; it is recorded in every contract.
const Deriver = "claimcheck-contract/v1"

// Prompt identifies the prompt a contract is derived from.
type Prompt struct {
	SessionID string
	EventID   string // the UserPromptSubmit event's ULID
	PromptID  string // Claude Code's prompt_id, when present
	Text      string
}

// actionVerbs make a prompt actionable. Matched as whole lower-case words.
var actionVerbs = toSet(
	"add", "build", "bump", "change", "clean", "commit", "configure", "convert", "create", "debug",
	"delete", "deploy", "disable", "document", "enable", "ensure", "extract", "fix", "generate",
	"implement", "install", "integrate", "make", "merge", "migrate", "move", "optimise", "optimize",
	"patch", "publish", "push", "refactor", "release", "remove", "rename", "repair", "replace",
	"resolve", "restore", "revert", "rewrite", "run", "set", "setup", "ship", "test", "update",
	"upgrade", "write",
)

func toSet(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// commandWords start a command hint when they appear in prose.
var commandWords = []string{
	"bun", "bundle", "cargo", "deno", "docker", "dotnet", "go", "gradle", "helm", "jest", "kubectl",
	"make", "mvn", "node", "npm", "npx", "pip", "pnpm", "poetry", "pytest", "python", "python3",
	"rake", "rspec", "terraform", "tox", "uv", "vitest", "yarn", "./gradlew", "./mvnw",
}

var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "can": true, "could": true, "do": true, "does": true, "for": true, "from": true,
	"have": true, "how": true, "i": true, "if": true, "in": true, "into": true, "is": true, "it": true,
	"its": true, "me": true, "my": true, "of": true, "on": true, "or": true, "our": true, "please": true,
	"should": true, "so": true, "that": true, "the": true, "then": true, "there": true, "this": true,
	"to": true, "up": true, "us": true, "we": true, "what": true, "when": true, "which": true,
	"will": true, "with": true, "would": true, "you": true, "your": true, "also": true, "all": true,
	"make": true, "sure": true, "again": true, "just": true, "need": true, "want": true, "them": true,
	"these": true, "those": true, "after": true, "before": true, "about": true, "using": true, "use": true,
}

var (
	urlRE      = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `)\]}]+`)
	backtickRE = regexp.MustCompile("`([^`\n]{1,400})`")
	fenceRE    = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*\n?(.*?)```")
	// Absolute paths, including single-segment ones such as /Makefile.
	absPathRE = regexp.MustCompile(`(?:^|[\s('"\[=:,])(/[\p{L}\p{N}._@+-]+(?:/[\p{L}\p{N}._@+-]+)*/?)`)
	// Relative paths: ./x, ../x, or a/b (at least one slash), or a file name
	// with an extension.
	relPathRE = regexp.MustCompile(
		`(?:^|[\s('"\[=:,])((?:\.{1,2}/)?[\p{L}\p{N}_@+-][\p{L}\p{N}._@+-]*(?:/[\p{L}\p{N}._@+-]+)+/?|\.{1,2}/[\p{L}\p{N}._@+-]+|[\p{L}\p{N}_-][\p{L}\p{N}_.-]*\.(?:go|py|ts|tsx|js|jsx|mjs|cjs|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|bash|zsh|sql|md|rst|txt|json|yaml|yml|toml|ini|cfg|conf|env|xml|html|css|scss|lock|mod|sum|proto|tf|lua|ex|exs|vue|svelte))`)
	wellKnownFiles = []string{"Makefile", "Dockerfile", "Gemfile", "Rakefile", "Procfile", "Justfile", "Taskfile", "Vagrantfile",
		"Jenkinsfile", "CODEOWNERS"}
	wordRE = regexp.MustCompile(`\p{L}[\p{L}\p{N}_-]*`)
)

// Actionable reports whether text asks for work, and which action verbs it
// uses (in order of first appearance).
func Actionable(text string) ([]string, bool) {
	var verbs []string
	for _, w := range words(text) {
		lw := strings.ToLower(w)
		if actionVerbs[lw] && !slices.Contains(verbs, lw) {
			verbs = append(verbs, lw)
		}
	}
	return verbs, len(verbs) > 0
}

// Derive returns the contract of an actionable prompt, and false when the
// prompt has no action verb (then it gets no contract).
func Derive(p Prompt) (schemas.Contract, bool) {
	verbs, ok := Actionable(p.Text)
	if !ok {
		return schemas.Contract{}, false
	}
	tf := Targets(p.Text)
	c := schemas.Contract{
		V:             1,
		Deriver:       Deriver,
		SessionID:     p.SessionID,
		PromptEventID: p.EventID,
		PromptID:      p.PromptID,
		PromptDigest:  digest.SHA256([]byte(p.Text)),
		Objective:     objective(p.Text),
		ActionVerbs:   verbs,
		TargetFields:  tf,
	}
	c.Ladder = ladder(tf)
	c.ExpectedVerification = expected(p.Text, tf)
	return c, true
}

// Targets extracts the structured target fields of text.
func Targets(text string) schemas.TargetFields {
	tf := schemas.TargetFields{
		Paths: []string{}, URLs: []string{}, CommandHints: []string{}, BacktickTokens: []string{}, Keywords: []string{},
	}
	// Code fences and backticks first: their content is literal.
	var literal []string
	for _, m := range fenceRE.FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(m[1], "\n") {
			if line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$ ")); line != "" {
				literal = append(literal, line)
			}
		}
	}
	prose := fenceRE.ReplaceAllString(text, " ")
	for _, m := range backtickRE.FindAllStringSubmatch(prose, -1) {
		literal = append(literal, strings.TrimSpace(m[1]))
	}
	for _, l := range literal {
		tf.BacktickTokens = addUnique(tf.BacktickTokens, l)
	}
	for _, u := range urlRE.FindAllString(text, -1) {
		tf.URLs = addUnique(tf.URLs, strings.TrimRight(u, ".,;:!?"))
	}
	noURLs := urlRE.ReplaceAllString(text, " ")
	// Paths come from prose and from literal tokens alike.
	pathText := noURLs + "\n" + strings.Join(literal, "\n")
	for _, m := range absPathRE.FindAllStringSubmatch(pathText, -1) {
		tf.Paths = addUnique(tf.Paths, cleanPath(m[1]))
	}
	for _, m := range relPathRE.FindAllStringSubmatch(pathText, -1) {
		if p := cleanPath(m[1]); !isVersionLike(p) {
			tf.Paths = addUnique(tf.Paths, p)
		}
	}
	for _, w := range words(noURLs) {
		if slices.Contains(wellKnownFiles, w) {
			tf.Paths = addUnique(tf.Paths, w)
		}
	}
	for _, l := range literal {
		if looksLikeCommand(l) {
			tf.CommandHints = addUnique(tf.CommandHints, l)
		}
	}
	for _, h := range proseCommands(backtickRE.ReplaceAllString(noURLs, " ")) {
		tf.CommandHints = addUnique(tf.CommandHints, h)
	}
	for _, w := range words(noURLs) {
		lw := strings.ToLower(w)
		if len(lw) < 4 || stopwords[lw] {
			continue
		}
		if actionVerbs[lw] {
			continue
		}
		if len(tf.Keywords) < 20 {
			tf.Keywords = addUnique(tf.Keywords, lw)
		}
	}
	return tf
}

func cleanPath(p string) string {
	p = strings.TrimRight(p, ".,;:!?'\")]}")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// isVersionLike rejects things such as 1.2.3 or v2.0 that the file pattern
// would otherwise take.
func isVersionLike(p string) bool {
	trimmed := strings.TrimPrefix(p, "v")
	return strings.Trim(trimmed, "0123456789.") == ""
}

func looksLikeCommand(s string) bool {
	first := strings.Fields(s)
	if len(first) == 0 {
		return false
	}
	return slices.Contains(commandWords, first[0]) || strings.HasPrefix(first[0], "./") && len(first) > 1
}

// proseCommands finds command hints in running text: a command word followed
// by its arguments, up to punctuation, a conjunction or the end of the line.
func proseCommands(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		for i := 0; i < len(fields); i++ {
			w := strings.Trim(fields[i], "\"'(")
			if !slices.Contains(commandWords, w) {
				continue
			}
			// "make" and "go" are common English: require an argument that
			// looks like one (a subcommand or a flag, not a stopword).
			hint := []string{w}
			for j := i + 1; j < len(fields) && len(hint) < 8; j++ {
				t := fields[j]
				lt := strings.ToLower(strings.Trim(t, ".,;:!?)\"'"))
				if lt == "" ||
					!strings.ContainsFunc(lt,
						func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '/' }) || stopwords[lt] ||
					lt == "is" || lt == "are" || lt == "was" || lt == "stays" || lt == "passes" || lt == "works" {
					break
				}
				end := strings.ContainsAny(t[len(t)-1:], ".,;:!?)") && !strings.HasSuffix(t, "...")
				hint = append(hint, strings.TrimRight(t, ",;:!?)\"'"))
				if end {
					hint[len(hint)-1] = strings.TrimSuffix(hint[len(hint)-1], ".")
					break
				}
			}
			if len(hint) < 2 || stopwords[strings.ToLower(hint[1])] {
				continue
			}
			out = append(out, strings.Join(hint, " "))
			i += len(hint) - 1
		}
	}
	return out
}

// ladder lists the hops a blocked claim must have tried: read each path,
// fetch each URL, run each command, and search.
func ladder(tf schemas.TargetFields) []schemas.Hop {
	var hops []schemas.Hop
	for _, p := range tf.Paths {
		hops = append(hops, schemas.Hop{Hop: "read " + p, Tools: []string{"Read", "Bash", "Grep", "Glob"}, Tokens: []string{p}})
	}
	for _, u := range tf.URLs {
		hops = append(hops, schemas.Hop{Hop: "fetch " + u, Tools: []string{"WebFetch", "Bash", "mcp"}, Tokens: []string{u}})
	}
	for _, c := range tf.CommandHints {
		hops = append(hops, schemas.Hop{Hop: "run " + c, Tools: []string{"Bash"}, Tokens: []string{c}})
	}
	if len(tf.URLs) > 0 || len(hops) == 0 {
		tokens := tf.Keywords
		if len(tokens) > 5 {
			tokens = tokens[:5]
		}
		if len(tokens) == 0 {
			tokens = []string{}
		}
		hops = append(hops, schemas.Hop{Hop: "search", Tools: []string{"WebSearch", "Grep", "Glob"}, Tokens: tokens})
	}
	if len(hops) > 32 {
		hops = hops[:32]
	}
	return hops
}

// expected lists the validators whose evidence a "done" claim should bring.
func expected(text string, tf schemas.TargetFields) []string {
	lower := strings.ToLower(text)
	var out []string
	testy := strings.Contains(lower, "test") || strings.Contains(lower, "spec")
	for _, h := range tf.CommandHints {
		if isTestCommand(h) {
			testy = true
		}
	}
	if testy {
		out = append(out, "test_pass")
	}
	if len(tf.CommandHints) > 0 && !testy {
		out = append(out, "command_zero_exit")
	}
	if len(tf.Paths) > 0 {
		out = append(out, "file_diff_present")
	}
	if len(tf.URLs) > 0 &&
		(strings.Contains(lower, "deploy") || strings.Contains(lower, "endpoint") || strings.Contains(lower, "health") ||
			strings.Contains(lower, "up")) {
		out = append(out, "http_2xx")
	}
	if len(out) == 0 {
		out = append(out, "command_zero_exit")
	}
	return out
}

// isTestCommand recognises the test runners test_pass understands.
func isTestCommand(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "pytest", "jest", "vitest", "tox", "rspec":
		return true
	case "go", "cargo", "npm", "yarn", "pnpm", "bun", "mvn", "./mvnw", "gradle", "./gradlew", "dotnet", "deno":
		return len(f) > 1 &&
			(f[1] == "test" || f[1] == "t" || f[1] == "verify" || (f[1] == "run" && len(f) > 2 && strings.Contains(f[2], "test")))
	case "python", "python3", "uv", "poetry":
		return strings.Contains(cmd, "pytest") || strings.Contains(cmd, "unittest")
	case "npx":
		return len(f) > 1 && (f[1] == "jest" || f[1] == "vitest" || f[1] == "mocha")
	}
	return false
}

// objective is the prompt's first sentence (or line), trimmed to 500 runes.
func objective(text string) string {
	t := strings.TrimSpace(fenceRE.ReplaceAllString(text, " "))
	if i := strings.IndexAny(t, "\n"); i > 0 {
		t = t[:i]
	}
	for i, r := range t {
		if (r == '.' || r == '?' || r == '!') && i+1 < len(t) && t[i+1] == ' ' {
			t = t[:i+1]
			break
		}
	}
	t = strings.Join(strings.Fields(t), " ")
	if r := []rune(t); len(r) > 500 {
		t = string(r[:500]) + "…"
	}
	return t
}

func words(text string) []string { return wordRE.FindAllString(text, -1) }

func addUnique(list []string, s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 1024 || slices.Contains(list, s) || len(list) >= 64 {
		return list
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return list
		}
	}
	return append(list, s)
}
