package shell

import "strings"

// Kind is what a program does with its arguments, as far as a reader of
// commands needs to know: each kind is one model of a program.
type Kind int

// Kinds of programs.
const (
	Reader  Kind = iota // reads the files its operands name (cat -n, less, grep, …); unknown programs too
	NoFiles             // its operands are not files (echo, sleep, kill, …)
	Fetcher             // fetches URLs; @file operands are uploads (nc, http, aria2c, …)
	Wrapper             // runs a command given in its arguments (sudo, env, timeout, xargs, …); see Wrap

	CommandShell // runs a shell script: -c code, a script file, or its input (sh, bash, zsh, …)
	PowerShell   // runs a PowerShell script (pwsh): -Command, -File, -EncodedCommand
	Interpreter  // runs code in another language: inline (python -c), a file, or its input; see Lang

	Formatter // creates a file system on a device (mkfs, mke2fs, mkswap, …)
	Wiper     // wipes a device's signatures with -a or -o (wipefs)
	Remover   // removes its operands (rm, unlink, rmdir, trash, gio trash)
	Shredder  // overwrites its operands (shred)
	DiskDump  // copies if= to of= (dd)
	Mover     // moves its sources to a destination (mv)
	Copier    // reads its sources, writes a destination (cp, install, ln, rsync, scp)
	Tee       // copies its input to its operands and its output (tee)
	Toucher   // writes its operands' times or sizes (touch, truncate)
	Editor    // edits its operands in place with -i, else reads them (sed)
	Permits   // changes its operands' mode, owner or attributes (chmod, chown, chattr, …)
	Finder    // walks its start points; -delete, -exec (find)
	Extractor // reads an archive, may write a directory (tar, unzip)
	Curl      // fetches URLs with curl's options
	Wget      // fetches URLs with wget's options
	Remote    // runs a command on another host (ssh)
	Decoder   // encodes, or with -d decodes, its input (base64, base32, basenc)
	HexDump   // dumps, or with -r undoes a dump of, its input (xxd)
	OpenSSL   // openssl: base64 -d and enc -d decode
	Reverser  // reverses its input's lines (rev)
	Cat       // copies its files, or its input, to its output (cat)

	Echo     // prints its arguments (echo)
	Printf   // prints its arguments by a format (printf)
	Pwd      // prints the working directory (pwd)
	Cd       // changes the working directory (cd, pushd, popd)
	Eval     // runs its arguments as a script (eval)
	Source   // runs a script file in this shell (source, .)
	Alias    // defines aliases (alias)
	Unalias  // removes aliases (unalias)
	Unset    // unsets variables or functions (unset)
	ReadVars // assigns variables from its input (read, mapfile, readarray)
	SetArgs  // sets options, or with -- the positional parameters (set)
	Shift    // shifts the positional parameters (shift)
	Trap     // runs a script on a signal (trap)
)

// Trait is a fact about how a program treats its operands.
type Trait uint

// Traits.
const (
	NamesOnly    Trait = 1 << iota // its operands are names, not contents (ls, stat, cd)
	ReadsTree                      // reads everything beneath its operands (tar, rg)
	PatternFirst                   // its first operand is a pattern or a script, not a file (grep, awk, jq)
	Fetches                        // it fetches URLs; name=@file arguments are uploads (curl, http)
	InPlace                        // -i edits the files after its code in place (perl)
)

// Program is what the catalogue knows of a program.
type Program struct {
	Names []string // the names it runs by (base names)
	// Versioned also matches a name followed by a version (python3.12);
	// Prefix matches any name that starts with the first of Names
	// (mkfs.ext4).
	Versioned, Prefix bool
	Kind              Kind
	Traits            Trait
	Spec              Spec  // which of its options take a value
	Wrap              *Wrap // Wrapper: how it runs its command
	Lang              *Lang // Interpreter: how to read its inline code
	// RunsTool: it runs a tool named by its first operand (npx jest) or,
	// when Tool is set, by the word after Tool (uv run pytest, python -m
	// pytest).
	RunsTool bool
	Tool     string
}

// Has reports whether p has trait t.
func (p Program) Has(t Trait) bool { return p.Traits&t != 0 }

// Lang is what reading an interpreter's inline code needs to know of its
// language.
type Lang struct {
	Code      []string // the options whose value is inline code (-c, -e)
	Attached  bool     // the code may be attached to its option (-c'print(1)')
	Comment   string   // what starts a line comment: "#", "//", or "" when unknown
	Backticks bool     // `…`, qx{…} and %x(…) run shell commands (Perl, Ruby, PHP)
	ExecEvals bool     // exec(…) evaluates code of the language (Python)
}

// Wrap is how a wrapper runs its command; see Unwrap.
type Wrap struct {
	Operands int      // operands before the command: timeout's duration, chroot's root, flock's lock file
	Assigns  bool     // NAME=value words may come before the command (sudo, env)
	Inert    []string // options with which it runs no command (command -v, ionice -p)
	Edit     []string // options with which its operands are files it edits (sudo -e)
	Script   []string // options whose value is a shell script it runs instead (su -c, flock -c)
	Split    []string // options whose value is split into the command, before the operands (env -S)
	Chdir    []string // options whose value is the directory the command runs in (env -C)
	// ScriptAfter: a Script option may also follow the operands before
	// the command (flock FILE -c CMD).
	ScriptAfter bool
	Then        Then     // what its operands are
	RunWith     []string // options with which the operands are a command after all (watch -x)
}

// Then is what a wrapper's operands, after its options, are.
type Then int

// What a wrapper's operands are.
const (
	RunsCommand Then = iota // the command it runs (sudo make)
	RunsItems               // the command it runs once for each item of its input (xargs)
	RunsScript              // words joined into a shell script (watch 'make', sg group cmd)
	RunsNothing             // no command (su user, script file)
	EditsFiles              // files it edits (sudoedit)
)

// catalogue is every program claimcheck has a model of: a name is in one
// entry only. Programs it does not list are Readers.
var catalogue = []Program{
	// Shells and interpreters.
	{Names: []string{"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash", "posh", "rbash", "rzsh", "fish", "csh",
		"tcsh"}, Kind: CommandShell},
	{Names: []string{"pwsh", "powershell", "pwsh.exe", "powershell.exe"}, Kind: PowerShell},
	{Names: []string{"python"}, Versioned: true, Kind: Interpreter, Spec: Spec{Short: "WXQ"}, RunsTool: true, Tool: "-m",
		Lang: &Lang{Code: []string{"-c"}, Attached: true, Comment: "#", ExecEvals: true}},
	{Names: []string{"pypy"}, Versioned: true, Kind: Interpreter, Spec: Spec{Short: "WXQ"},
		Lang: &Lang{Code: []string{"-c"}, Attached: true, Comment: "#"}},
	{Names: []string{"perl"}, Kind: Interpreter, Traits: InPlace, Spec: Spec{Short: "IMmx"},
		Lang: &Lang{Code: []string{"-e", "-E"}, Attached: true, Backticks: true}},
	{Names: []string{"ruby"}, Kind: Interpreter, Spec: Spec{Short: "IrC"},
		Lang: &Lang{Code: []string{"-e"}, Attached: true, Comment: "#", Backticks: true}},
	{Names: []string{"node"}, Kind: Interpreter, Spec: Spec{Short: "r", Long: []string{"require", "import", "loader", "input-type"}},
		Lang: &Lang{Code: []string{"-e", "--eval", "-p", "--print"}, Comment: "//"}},
	{Names: []string{"nodejs"}, Kind: Interpreter, Spec: Spec{Short: "r"},
		Lang: &Lang{Code: []string{"-e", "--eval", "-p", "--print"}, Attached: true, Comment: "//"}},
	{Names: []string{"php"}, Kind: Interpreter, Spec: Spec{Short: "cdf"},
		Lang: &Lang{Code: []string{"-r"}, Attached: true, Comment: "//", Backticks: true}},
	{Names: []string{"lua", "luajit"}, Kind: Interpreter, Spec: Spec{Short: "l"}, Lang: &Lang{Code: []string{"-e"}, Attached: true}},
	{Names: []string{"osascript"}, Kind: Interpreter, Lang: &Lang{Code: []string{"-e"}, Attached: true}},
	{Names: []string{"Rscript"}, Kind: Interpreter, Lang: &Lang{Code: []string{"-e"}, Attached: true, Comment: "#"}},

	// Wrappers.
	{Names: []string{"sudo"}, Kind: Wrapper,
		Spec: Spec{Short: "CDghpRrtTUu",
			Long: []string{"user", "group", "host", "prompt", "role", "type", "close-from", "chdir", "chroot", "other-user",
				"command-timeout"}, StopAtOperand: true},
		Wrap: &Wrap{Assigns: true, Edit: []string{"-e", "--edit"}}},
	{Names: []string{"sudoedit"}, Kind: Wrapper, Spec: Spec{Short: "CDghpRrtTUu"}, Wrap: &Wrap{Then: EditsFiles}},
	{Names: []string{"doas"}, Kind: Wrapper, Spec: Spec{Short: "uC", StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"env"}, Kind: Wrapper,
		Spec: Spec{Short: "uCPS",
			Long: []string{"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}, StopAtOperand: true},
		Wrap: &Wrap{Assigns: true, Split: []string{"-S", "--split-string"}, Chdir: []string{"-C", "--chdir"}}},
	{Names: []string{"command"}, Kind: Wrapper, Spec: Spec{StopAtOperand: true}, Wrap: &Wrap{Inert: []string{"-v", "-V"}}},
	{Names: []string{"builtin", "nohup", "unbuffer", "busybox", "toybox", "setsid"}, Kind: Wrapper,
		Spec: Spec{StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"exec"}, Kind: Wrapper, Spec: Spec{Short: "a", StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"nice"}, Kind: Wrapper,
		Spec: Spec{Short: "n", Long: []string{"adjustment"}, StopAtOperand: true, Numeric: true}, Wrap: &Wrap{}},
	{Names: []string{"time"}, Kind: Wrapper,
		Spec: Spec{Short: "fo", Long: []string{"format", "output"}, StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"timeout"}, Kind: Wrapper, Spec: Spec{Short: "sk", Long: []string{"signal", "kill-after"}, StopAtOperand: true},
		Wrap: &Wrap{Operands: 1}},
	{Names: []string{"stdbuf"}, Kind: Wrapper,
		Spec: Spec{Short: "ioe", Long: []string{"input", "output", "error"}, StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"ionice"}, Kind: Wrapper,
		Spec: Spec{Short: "cnpPu", Long: []string{"class", "classdata", "pid", "pgid", "uid"}, StopAtOperand: true},
		Wrap: &Wrap{Inert: []string{"-p", "-P", "-u", "--pid", "--pgid", "--uid"}}},
	{Names: []string{"chrt"}, Kind: Wrapper, Spec: Spec{Short: "TPD", StopAtOperand: true},
		Wrap: &Wrap{Operands: 1, Inert: []string{"-p", "--pid"}}},
	{Names: []string{"taskset"}, Kind: Wrapper, Spec: Spec{StopAtOperand: true}, Wrap: &Wrap{Operands: 1, Inert: []string{"-p", "--pid"}}},
	{Names: []string{"caffeinate"}, Kind: Wrapper, Spec: Spec{Short: "tw", StopAtOperand: true}, Wrap: &Wrap{}},
	{Names: []string{"chroot"}, Kind: Wrapper, Spec: Spec{Long: []string{"userspec", "groups"}, StopAtOperand: true},
		Wrap: &Wrap{Operands: 1}},
	{Names: []string{"flock"}, Kind: Wrapper,
		Spec: Spec{Short: "wEc", Long: []string{"wait", "timeout", "conflict-exit-code", "command"}, StopAtOperand: true},
		Wrap: &Wrap{Operands: 1, Script: []string{"-c", "--command"}, ScriptAfter: true}},
	{Names: []string{"watch"}, Kind: Wrapper, Spec: Spec{Short: "nq", Long: []string{"interval", "equexit"}, StopAtOperand: true},
		Wrap: &Wrap{Then: RunsScript, RunWith: []string{"-x", "--exec"}}},
	{Names: []string{"su"}, Kind: Wrapper,
		Spec: Spec{Short: "cgGsw", Long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}},
		Wrap: &Wrap{Script: []string{"-c", "--command", "--session-command"}, Then: RunsNothing}},
	{Names: []string{"runuser"}, Kind: Wrapper,
		Spec: Spec{Short: "cgGsw", Long: []string{"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}},
		Wrap: &Wrap{Operands: 1, Script: []string{"-c", "--command", "--session-command"}}},
	{Names: []string{"sg"}, Kind: Wrapper, Spec: Spec{Short: "c"}, Wrap: &Wrap{Operands: 1, Script: []string{"-c"}, Then: RunsScript}},
	{Names: []string{"script"}, Kind: Wrapper,
		Spec: Spec{Short: "cEIOBTtm", Long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format"}},
		Wrap: &Wrap{Script: []string{"-c", "--command"}, Then: RunsNothing}},
	{Names: []string{"xargs"}, Kind: Wrapper,
		Spec: Spec{Short: "aEdILnPs",
			Long: []string{"arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs", "max-chars",
				"process-slot-var"}, StopAtOperand: true},
		Wrap: &Wrap{Then: RunsItems}},

	// Runners: they run a tool by name.
	{Names: []string{"npx", "pnpx", "bunx"}, RunsTool: true},
	{Names: []string{"uv", "poetry", "pipenv", "hatch"}, RunsTool: true, Tool: "run"},
	{Names: []string{"bundle", "pnpm", "yarn", "npm"}, RunsTool: true, Tool: "exec"},

	// Devices and file systems.
	{Names: []string{"mkfs"}, Prefix: true, Kind: Formatter},
	{Names: []string{"mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "newfs", "newfs_msdos", "newfs_apfs", "newfs_hfs",
		"blkdiscard"}, Kind: Formatter},
	{Names: []string{"wipefs"}, Kind: Wiper, Spec: Spec{Short: "ot"}},
	{Names: []string{"dd"}, Kind: DiskDump},
	{Names: []string{"shred"}, Kind: Shredder, Spec: Spec{Short: "ns", Long: []string{"iterations", "size", "random-source"}}},

	// Files: writers, removers, movers.
	{Names: []string{"rm", "unlink", "rmdir", "srm", "trash", "trash-put", "gio"}, Kind: Remover},
	{Names: []string{"mv"}, Kind: Mover, Spec: Spec{Short: "tS", Long: []string{"target-directory", "suffix"}}},
	{Names: []string{"cp"}, Kind: Copier, Spec: Spec{Short: "tS", Long: []string{"target-directory", "suffix"}}},
	{Names: []string{"ln"}, Kind: Copier, Spec: Spec{Short: "tS", Long: []string{"target-directory", "suffix"}}},
	{Names: []string{"install"}, Kind: Copier,
		Spec: Spec{Short: "gmoStT", Long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}},
	{Names: []string{"rsync"}, Kind: Copier, Traits: ReadsTree,
		Spec: Spec{Short: "eBfMT",
			Long: []string{"rsh", "filter", "exclude", "include", "exclude-from", "include-from", "files-from", "temp-dir", "log-file",
				"password-file", "backup-dir", "link-dest", "compare-dest", "copy-dest", "chmod", "chown", "partial-dir", "block-size", "max-size", "min-size", "timeout", "port", "out-format", "bwlimit", "suffix", "max-delete", "info", "debug"}}},
	{Names: []string{"scp"}, Kind: Copier, Traits: ReadsTree, Spec: Spec{Short: "cFiJlopPSDX"}},
	{Names: []string{"tee"}, Kind: Tee},
	{Names: []string{"truncate", "touch"}, Kind: Toucher, Spec: Spec{Short: "srdt", Long: []string{"size", "reference", "date"}}},
	{Names: []string{"sed"}, Kind: Editor},
	{Names: []string{"chmod", "chown", "chgrp", "chattr", "setfacl"}, Kind: Permits},
	{Names: []string{"find"}, Kind: Finder},
	{Names: []string{"tar"}, Kind: Extractor, Traits: ReadsTree},
	{Names: []string{"bsdtar", "unzip"}, Kind: Extractor},

	// Readers with traits.
	{Names: []string{"ls", "dir", "vdir", "stat", "file", "basename", "dirname", "realpath", "readlink", "du", "tree",
		"exa", "eza", "lsd", "wc", "lsattr", "namei", "mkdir"}, Traits: NamesOnly},
	{Names: []string{"grep", "egrep", "fgrep", "zgrep", "awk", "gawk", "mawk", "nawk", "jq", "yq"}, Traits: PatternFirst},
	{Names: []string{"rg", "ag", "ack"}, Traits: PatternFirst | ReadsTree},
	{Names: []string{"zip", "7z", "7za"}, Traits: ReadsTree},
	{Names: []string{"cat"}, Kind: Cat},
	{Names: []string{"echo"}, Kind: Echo},
	{Names: []string{"printf"}, Kind: Printf},
	{Names: []string{"true", "false", ":", "exit", "return", "break", "continue", "wait", "sleep",
		"jobs", "fg", "bg", "disown", "ulimit", "umask", "shopt", "enable", "test", "[", "type", "which", "hash",
		"help", "man", "whereis", "whatis", "info", "apropos", "compgen", "complete", "seq", "date", "expr", "let",
		"yes", "kill", "pkill", "killall", "export", "declare", "local", "readonly", "typeset", "getopts", "history",
		"pgrep", "ps", "id", "whoami", "uname", "hostname", "printenv", "sort", "uniq"}, Kind: NoFiles},

	// Fetchers and decoders.
	{Names: []string{"curl"}, Kind: Curl, Traits: Fetches, Spec: Spec{Short: "AbcCdDeEFHKmoPQrTtuUwxXyYz", Long: []string{
		"output", "output-dir", "data", "data-binary", "data-raw", "data-ascii", "data-urlencode", "form", "form-string",
		"upload-file", "config", "cert", "key", "cacert", "capath", "header", "user", "user-agent", "referer", "request",
		"url", "cookie", "cookie-jar", "proxy", "resolve", "connect-to", "max-time", "retry", "write-out", "dump-header",
		"trace", "trace-ascii", "stderr", "netrc-file", "range", "limit-rate", "interface", "connect-timeout", "json",
	}}},
	{Names: []string{"wget"}, Kind: Wget, Traits: Fetches, Spec: Spec{Short: "OoaiBtTwQPlARDIXUe", Long: []string{
		"output-document", "output-file", "append-output", "input-file", "base", "tries", "timeout", "wait", "quota",
		"directory-prefix", "level", "accept", "reject", "domains", "include-directories", "exclude-directories",
		"user-agent", "execute", "post-file", "body-file", "header", "user", "password", "load-cookies", "save-cookies",
		"ca-certificate", "certificate", "private-key", "post-data", "method", "referer",
	}}},
	{Names: []string{"http", "https", "xh", "httpie", "nc", "ncat", "netcat", "socat", "aria2c", "fetch"}, Kind: Fetcher, Traits: Fetches},
	{Names: []string{"ssh"}, Kind: Remote, Spec: Spec{Short: "BbcDEeFIiJLlmOoPpQRSWw", StopAtOperand: true}},
	{Names: []string{"base64", "base32", "basenc"}, Kind: Decoder, Spec: Spec{Short: "w", Long: []string{"wrap"}}},
	{Names: []string{"xxd"}, Kind: HexDump, Spec: Spec{Short: "cglos", Long: []string{"cols", "len", "seek", "offset"}}},
	{Names: []string{"openssl"}, Kind: OpenSSL},
	{Names: []string{"rev"}, Kind: Reverser},

	// Builtins that change the shell.
	{Names: []string{"cd", "pushd", "popd"}, Kind: Cd, Traits: NamesOnly},
	{Names: []string{"pwd"}, Kind: Pwd},
	{Names: []string{"eval"}, Kind: Eval},
	{Names: []string{"source", "."}, Kind: Source},
	{Names: []string{"alias"}, Kind: Alias},
	{Names: []string{"unalias"}, Kind: Unalias},
	{Names: []string{"unset"}, Kind: Unset},
	{Names: []string{"read", "mapfile", "readarray"}, Kind: ReadVars, Spec: Spec{Short: "pdnNtuaCcOs"}},
	{Names: []string{"set"}, Kind: SetArgs},
	{Names: []string{"shift"}, Kind: Shift},
	{Names: []string{"trap"}, Kind: Trap, Spec: Spec{StopAtOperand: true}},
}

// byName indexes the catalogue.
var byName = func() map[string]*Program {
	m := map[string]*Program{}
	for i := range catalogue {
		for _, n := range catalogue[i].Names {
			m[n] = &catalogue[i]
		}
	}
	return m
}()

// Lookup returns what the catalogue knows of the program a command names
// by base (BaseName); ok is false for a program it does not list, which
// is a Reader.
func Lookup(base string) (p *Program, ok bool) {
	if p, ok := byName[base]; ok {
		return p, true
	}
	if v := strings.TrimRight(base, "0123456789."); v != base {
		if p, ok := byName[v]; ok && p.Versioned {
			return p, true
		}
	}
	for i := range catalogue {
		if p := &catalogue[i]; p.Prefix && strings.HasPrefix(base, p.Names[0]) {
			return p, true
		}
	}
	return &unknown, false
}

// unknown is every program the catalogue does not list.
var unknown = Program{Kind: Reader}
