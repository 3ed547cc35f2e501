package shell

import "strings"

// Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r,
// lua -e, osascript -e, Rscript -e) is not shell, and this package does
// not parse those languages. ReadCode reads what such a one-liner hands to
// the operating system, which in one line of any of them is spelled the
// same few ways: a call that runs a shell command (system, popen,
// execSync, subprocess.run, backticks, qx{}, %x(), do shell script …)
// with a command written as a string literal or a list of literals; code
// evaluated in the language itself (eval); a call that deletes a tree
// (shutil.rmtree, FileUtils.rm_rf, fs.rmSync, remove_dir_all, …); and
// literals that may name files. Code that builds names at run time
// (getattr(os, "sys"+"tem")) is beyond this reading, as it is beyond any
// static check.

// spawnCalls run their (first) argument as a shell command or program.
var spawnCalls = set("system", "popen", "Popen", "check_output", "check_call", "getoutput", "getstatusoutput",
	"execSync", "execFileSync", "execFile", "spawnSync", "spawn", "shell_exec", "passthru", "proc_open", "readpipe",
	"execute", "capture2", "capture2e", "capture3", "system2", "exec", "execl", "execlp", "execle", "execv", "execvp",
	"execvpe", "spawnl", "spawnlp", "spawnv", "spawnvp", "run", "call")

// qualifiedSpawn are spawn calls only when called on subprocess (run and
// call are common words: asyncio.run(main())).
var qualifiedSpawn = set("run", "call")

// treeDeletes remove a directory tree.
var treeDeletes = set("rmtree", "rm_rf", "rm_r", "remove_entry_secure", "rmSync", "rmdirSync", "remove_dir_all",
	"removedirs")

// Literal is a string literal in inline code.
type Literal struct {
	Text       string
	Used       bool // a step of the code took it
	start, end int  // the literal's extent in the code, quotes included
	exec       bool // a backtick, qx{} or %x() literal: run as a command
}

// Use is what inline code does with a string literal.
type Use int

// Uses of a literal.
const (
	Plain       Use = iota // nothing the reading knows of: maybe a file name
	RunsShell              // a shell command: `…`, qx{…}, %x(…), or the command a spawn call's literals make
	EvalsCode              // code in the interpreter's own language (eval, Python's exec)
	DeletesTree            // the path of a call that deletes a tree
)

// Step is one literal of the code, or the literals of one spawn call, and
// what the code does with it.
type Step struct {
	Use  Use
	Text string // the literal; for a spawn call, the shell command its literals make
}

// Code is what one line of inline code of a language hands to the
// operating system.
type Code struct {
	Steps []Step // in the order of the code
	// Literals are all the string literals of the code; Used marks those
	// a step took.
	Literals []Literal
	// Dynamic names the spawn calls whose command is not a literal.
	Dynamic []string
}

// ReadCode reads one line of inline code in lang.
func ReadCode(src string, lang Lang) Code {
	lits := literals(src, lang)
	c := Code{Literals: lits}
	for i := 0; i < len(lits); i++ {
		l := lits[i]
		if l.exec {
			c.Literals[i].Used = true
			c.Steps = append(c.Steps, Step{RunsShell, l.Text})
			continue
		}
		name := callBefore(src, l.start)
		switch {
		case name == "":
			c.Steps = append(c.Steps, Step{Plain, l.Text})
		case name == "eval" || name == "exec" && lang.ExecEvals:
			c.Literals[i].Used = true
			c.Steps = append(c.Steps, Step{EvalsCode, l.Text})
		case isSpawn(src, name, l.start, false):
			cmd, n := spawnCommand(src, lits[i:])
			for j := range n {
				c.Literals[i+j].Used = true
			}
			c.Steps = append(c.Steps, Step{RunsShell, cmd})
			i += n - 1
		case treeDeletes[name]:
			c.Literals[i].Used = true
			c.Steps = append(c.Steps, Step{DeletesTree, l.Text})
		default:
			c.Steps = append(c.Steps, Step{Plain, l.Text})
		}
	}
	c.Dynamic = callsWithoutLiteral(src)
	return c
}

// literals finds the string literals of src: '…', "…", Python's triple
// quotes, and the command literals of Perl, Ruby and PHP (`…`, qx{…},
// %x(…)). In JavaScript a backtick is a template string, not a command.
func literals(src string, lang Lang) []Literal {
	var out []Literal
	for i := 0; i < len(src); i++ {
		c := src[i]
		// Line comments, whose quotes are not strings ("# it's fine").
		if lang.Comment != "" && strings.HasPrefix(src[i:], lang.Comment) {
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return out
			}
			i += end
			continue
		}
		switch {
		case (c == 'q' && strings.HasPrefix(src[i:], "qx") || c == '%' && strings.HasPrefix(src[i:], "%x")) && i+2 < len(src) &&
			(i == 0 || !isIdentByte(src[i-1])):
			closeBy := map[byte]byte{'{': '}', '(': ')', '[': ']', '<': '>'}
			o := src[i+2]
			cl, paired := closeBy[o]
			if !paired {
				if isIdentByte(o) || o == ' ' {
					continue
				}
				cl = o
			}
			end := strings.IndexByte(src[i+3:], cl)
			if end < 0 {
				return out
			}
			out = append(out, Literal{Text: src[i+3 : i+3+end], start: i, end: i + 4 + end, exec: true})
			i += 3 + end
		case c == '\'' || c == '"' || c == '`':
			q := string(c)
			if (c == '\'' || c == '"') && strings.HasPrefix(src[i:], q+q+q) {
				q = q + q + q
			}
			text, n, ok := readQuoted(src[i+len(q):], q)
			if !ok {
				return out
			}
			if c == '`' && !lang.Backticks {
				i += len(q) + n - 1
				continue
			}
			out = append(out, Literal{Text: text, start: i, end: i + len(q) + n, exec: c == '`'})
			i += len(q) + n - 1
		}
	}
	return out
}

// readQuoted reads up to the closing quote q, resolving backslash escapes
// of quotes, backslashes, \n and \t; n counts the bytes consumed with the
// closing quote.
func readQuoted(s, q string) (text string, n int, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], q) {
			return b.String(), i + len(q), true
		}
		if s[i] == '\\' && i+1 < len(s) {
			i++
			b.WriteByte(Escaped(s[i]))
			continue
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

// Escaped is the byte a backslash escape \c stands for in a string
// literal as the analysis reads it: a newline for n, a tab for t, c
// itself otherwise.
func Escaped(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return c
}

// callBefore returns the identifier a literal at pos is an argument of:
// the name before "(" (and an opening "[" of a list), or before the
// literal itself (Perl's and Ruby's system "cmd").
func callBefore(src string, pos int) string {
	i := pos
	skip := func() {
		for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
			i--
		}
	}
	skip()
	if i > 0 && src[i-1] == '[' {
		i--
		skip()
	}
	if i > 0 && src[i-1] == '(' {
		i--
		skip()
	}
	j := i
	for j > 0 && isIdentByte(src[j-1]) {
		j--
	}
	return src[j:i]
}

// isSpawn: name, ending at pos, runs a command; osascript's do shell
// script too. run and call count as methods (x.run("…"), which catches
// subprocess imported under another name) when their argument is a
// literal (strict false), and only as subprocess.run/call otherwise.
func isSpawn(src, name string, pos int, strict bool) bool {
	before := strings.TrimRight(src[:pos], " \t[(\"'")
	if name == "script" {
		return strings.HasSuffix(before, "do shell script")
	}
	if !spawnCalls[name] {
		return false
	}
	if qualifiedSpawn[name] {
		if strict {
			return strings.HasSuffix(before, "subprocess."+name)
		}
		return strings.HasSuffix(before, "."+name)
	}
	return true
}

// spawnCommand is the shell command a spawn call's literal arguments
// make: one literal, or a list of literals (["rm", "-rf", "/"]) or a
// program and its list (spawn("rm", ["-rf", "/"])), each word quoted. n
// counts the literals taken.
func spawnCommand(src string, lits []Literal) (cmd string, n int) {
	words := []string{lits[0].Text}
	n = 1
	for n < len(lits) {
		between := strings.TrimSpace(src[lits[n-1].end:lits[n].start])
		if between != "," && between != ", [" && between != ",[" {
			break
		}
		words = append(words, lits[n].Text)
		n++
	}
	if n == 1 && !listOpens(src, lits[0].start) {
		return words[0], 1 // a command line
	}
	for i, w := range words {
		words[i] = Quote(w)
	}
	return strings.Join(words, " "), n
}

func listOpens(src string, pos int) bool {
	return strings.HasSuffix(strings.TrimRight(src[:pos], " \t"), "[")
}

// callsWithoutLiteral lists the spawn calls in src whose first argument is
// not a string literal.
func callsWithoutLiteral(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		if !isIdentByte(src[i]) || i > 0 && isIdentByte(src[i-1]) {
			continue
		}
		j := i
		for j < len(src) && isIdentByte(src[j]) {
			j++
		}
		name := src[i:j]
		k := j
		for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
			k++
		}
		if k < len(src) && k > j && (src[k] == '$' || src[k] == '@') && isSpawn(src, name, j, true) {
			// Perl and Ruby call without parentheses: system $cmd, exec @ARGV.
			out = append(out, name)
			i = j - 1
			continue
		}
		if k >= len(src) || src[k] != '(' || !isSpawn(src, name, j, true) {
			i = j - 1
			continue
		}
		k++
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '[') {
			k++
		}
		if k < len(src) && !strings.ContainsRune(`'"`+"`", rune(src[k])) && src[k] != ')' {
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// MaybePath reports whether a literal could name a file (no spaces, not a
// URL).
func MaybePath(s string) bool {
	return s != "" && len(s) <= 4096 && !strings.ContainsAny(s, " \t\n\r") && !strings.Contains(s, "://")
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
