package inject

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// A Tag names where the content of a tool result came from (the seed's
// content-source tags). Source decides it from the tool and its input,
// never from the content.
type Tag string

// The tags, from most to least trusted. USER_INPUT and SYSTEM_INSTRUCTION
// complete the vocabulary; Source never returns them, since no tool result
// is either.
const (
	UserInput         Tag = "USER_INPUT"         // the user's own prompt
	SystemInstruction Tag = "SYSTEM_INSTRUCTION" // the agent's configuration
	FileInternal      Tag = "FILE_INTERNAL"      // a file inside the project directory
	CommandOutput     Tag = "COMMAND_OUTPUT"     // a local command's output (tests, builds, git status)
	FileExternal      Tag = "FILE_EXTERNAL"      // a file outside the project, or a path that cannot be placed
	AgentHandoff      Tag = "AGENT_HANDOFF"      // a sub-agent's answer (Task, Agent)
	MCPExternal       Tag = "MCP_EXTERNAL"       // an MCP server's answer (mcp__server__tool)
	NetworkExternal   Tag = "NETWORK_EXTERNAL"   // the network: WebFetch, WebSearch, curl, git clone, ssh
	Unknown           Tag = "UNKNOWN"            // a tool this package does not know, or input it cannot read
)

// rank orders tags by trust: a compound source takes its least trusted part.
var rank = map[Tag]int{
	UserInput: 0, SystemInstruction: 0, FileInternal: 1, CommandOutput: 2, FileExternal: 3,
	AgentHandoff: 4, MCPExternal: 5, NetworkExternal: 6, Unknown: 7,
}

func worse(a, b Tag) Tag {
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Source returns the content-source tag of a tool's result, from the tool's
// name, its input (the hook payload's tool_input) and the project directory
// (the hook payload's cwd). The rules:
//
//   - Read, NotebookRead, Edit, MultiEdit, Write, NotebookEdit, Grep, Glob,
//     LS (and Gemini CLI's read_file, read_many_files, glob,
//     search_file_content, list_directory): FILE_INTERNAL when every path
//     of the input (file_path, notebook_path, path; relative paths are
//     taken from project) is project or under it once cleaned,
//     FILE_EXTERNAL otherwise; a tool without a path argument (Grep, Glob)
//     searches project: FILE_INTERNAL. A path starting with "~" or holding
//     a variable is FILE_EXTERNAL.
//   - WebFetch, WebSearch (web_fetch, google_web_search): NETWORK_EXTERNAL.
//   - mcp__<server>__<tool>: MCP_EXTERNAL.
//   - Task, Agent: AGENT_HANDOFF.
//   - Bash (run_shell_command, shell): the least trusted of its simple
//     commands, wrappers peeled (sudo, env, timeout, xargs): a network
//     program (curl, wget, ssh, git clone/fetch/pull, gh, pip download, …)
//     is NETWORK_EXTERNAL; a file reader (cat, head, tail, less, grep, …)
//     is FILE_INTERNAL or FILE_EXTERNAL by its path operands as above;
//     anything else is COMMAND_OUTPUT. A command that does not parse is
//     UNKNOWN.
//   - BashOutput (a background shell's output): UNKNOWN, since the command
//     is not in its input.
//   - any other tool, or input that is not a JSON object: UNKNOWN.
func Source(tool string, input []byte, project string) Tag {
	if strings.HasPrefix(tool, "mcp__") {
		return MCPExternal
	}
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		return Unknown
	}
	str := func(k string) (string, bool) { s, ok := in[k].(string); return s, ok && s != "" }
	switch tool {
	case "WebFetch", "WebSearch", "web_fetch", "google_web_search":
		return NetworkExternal
	case "Task", "Agent":
		return AgentHandoff
	case "Read", "NotebookRead", "Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Glob", "LS",
		"read_file", "read_many_files", "glob", "search_file_content", "list_directory", "write_file", "replace":
		tag := FileInternal
		for _, k := range []string{"file_path", "notebook_path", "path", "absolute_path", "dir_path"} {
			if p, ok := str(k); ok {
				tag = worse(tag, place(p, project))
			}
		}
		if ps, ok := in["paths"].([]any); ok {
			for _, p := range ps {
				s, _ := p.(string)
				tag = worse(tag, place(s, project))
			}
		}
		return tag
	case "Bash", "run_shell_command", "shell":
		if c, ok := str("command"); ok {
			return command(c, project)
		}
		if argv, ok := in["command"].([]any); ok { // Codex: argv
			words := make([]string, 0, len(argv))
			for _, a := range argv {
				s, _ := a.(string)
				words = append(words, s)
			}
			return argvTag(words, project)
		}
		return Unknown
	}
	return Unknown
}

// place tags a path: FILE_INTERNAL under project, FILE_EXTERNAL otherwise.
func place(p, project string) Tag {
	if p == "" || project == "" || strings.HasPrefix(p, "~") || strings.ContainsAny(p, "$`") {
		return FileExternal
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(project, p)
	}
	rel, err := filepath.Rel(filepath.Clean(project), filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return FileExternal
	}
	return FileInternal
}

// command tags a shell command line by its simple commands.
func command(src, project string) Tag {
	f, err := shell.Parse(src)
	if err != nil {
		return Unknown
	}
	var tag Tag
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		words := make([]string, 0, len(call.Args))
		for _, w := range call.Args {
			s, _ := shell.Unquote(w)
			words = append(words, s)
		}
		tag = worse(tag, argvTag(words, project))
		return true
	})
	if tag == "" {
		return CommandOutput
	}
	return tag
}

// network programs: their output is what a remote host sent.
var network = map[string]bool{
	"curl": true, "wget": true, "http": true, "https": true, "xh": true, "aria2c": true, "nc": true,
	"ncat": true, "netcat": true, "telnet": true, "ssh": true, "scp": true, "sftp": true, "ftp": true,
	"lynx": true, "w3m": true, "links": true, "gh": true, "glab": true, "dig": true, "nslookup": true,
	"host": true, "whois": true, "openssl": true, "socat": true, "websocat": true, "grpcurl": true,
}

// networkSub: programs whose listed subcommands talk to the network.
var networkSub = map[string]map[string]bool{
	"git":     {"clone": true, "fetch": true, "pull": true, "ls-remote": true, "submodule": true},
	"pip":     {"download": true, "install": true},
	"pip3":    {"download": true, "install": true},
	"npm":     {"view": true, "info": true, "install": true, "i": true, "show": true},
	"go":      {"get": true, "mod": true},
	"docker":  {"pull": true, "run": true, "search": true},
	"kubectl": {"logs": true, "get": true, "describe": true, "exec": true},
	"aws":     {"s3": true},
}

// readers print their file operands.
var readers = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "bat": true, "strings": true,
	"xxd": true, "od": true, "hexdump": true, "grep": true, "rg": true, "ag": true, "jq": true, "yq": true,
	"sed": true, "awk": true, "nl": true, "tac": true, "sort": true, "uniq": true, "cut": true, "wc": true,
	"diff": true, "cmp": true, "ls": true, "find": true, "tree": true, "file": true, "stat": true,
}

func argvTag(argv []string, project string) Tag {
	progs := shell.Programs(argv)
	for _, a := range progs {
		if len(a) == 0 {
			continue
		}
		base := shell.BaseName(a[0])
		if network[base] || len(a) > 1 && networkSub[base][a[1]] {
			return NetworkExternal
		}
	}
	// the innermost program (wrappers peeled) says what its output is
	if len(progs) == 0 || len(progs[len(progs)-1]) == 0 {
		return CommandOutput
	}
	a := progs[len(progs)-1]
	if !readers[shell.BaseName(a[0])] {
		return CommandOutput
	}
	tag := FileInternal
	for _, op := range a[1:] {
		if op == "" || op[0] == '-' || strings.ContainsAny(op, " {}'\"|;=") ||
			!strings.ContainsRune(op, '/') && !strings.Contains(op, ".") && op[0] != '~' {
			continue
		}
		tag = worse(tag, place(op, project))
	}
	return tag
}
