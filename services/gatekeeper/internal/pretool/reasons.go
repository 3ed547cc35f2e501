package pretool

import (
	"strconv"
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// msg names one message of the reasons table.
type msg int

// Messages, grouped by rule.
const (
	msgInternalError msg = iota
	msgNoPolicy
	msgInputTooLarge
	msgInputNotJSON
	msgInputUnreadable
	msgNoCommand
	msgNoURL
	msgNoTool
	msgNoPathField
	msgNoPattern
	msgNoLSPath
	msgControlBytes

	msgToolDenied
	msgToolNotAllowed
	msgToolUnlisted
	msgToolAsk

	msgShellTooLong
	msgUnparsable
	msgNestedUnparsable
	msgTooDeep
	msgInlineTooDeep
	msgTooManySteps
	msgTooManyWords

	msgRmRoot
	msgFindDelete
	msgMkfs
	msgDDDevice
	msgDeviceWrite
	msgShredDevice
	msgForkBomb
	msgChmodRoot
	msgChownRoot

	msgGitForcePush
	msgGitDeleteRemote
	msgGitResetHard
	msgGitClean
	msgGitDiscard
	msgGitStashDrop
	msgGitBranchDelete
	msgGitRewrite

	msgDownloadedProgram
	msgRunDownloaded
	msgScriptFileDownloaded
	msgScriptDownloaded
	msgStreamDownloaded
	msgDecodedProgram
	msgScriptDecoded
	msgStreamDecoded
	msgEncodedCommand

	msgDynamicCommand
	msgDynamicEval
	msgDynamicShell
	msgDynamicAlias
	msgRmEmptyVariable
	msgRmUnknownDir
	msgInlineDynamic
	msgInlineSpawnDynamic

	msgHookExec
	msgPrivateWrite
	msgHookWrite
	msgPrivateRead
	msgDeniedCommand

	msgProtectedWrite
	msgConfigWrite
	msgInlineConfig
	msgSensitiveWrite
	msgSensitiveRead

	msgURLTooLong
	msgURLMalformed
	msgURLScheme
	msgURLPrivate
	msgURLMetadata
	msgURLLocalhost
	msgURLDeniedDomain
	msgShellMetadata
)

// Texts that more than one rule shows.
const (
	textChangesRoot   = "claimcheck refused {cmd}: it recursively changes permissions or ownership of {path}, a system or home directory, which can break the system (sudo, ssh) and expose files. Change only the project files you mean."
	textDynamicScript = "claimcheck cannot tell what {what} runs: the script comes from a variable or command substitution known only at run time. Write the command literally."
	textStreamDecoded = "claimcheck refused this command: {what} runs a decoded script (base64 -d | sh); obfuscated commands cannot be reviewed. Run the command in plain text."
	textFetchHost     = "claimcheck refused to fetch {url}: its host {host} is {why}; WebFetch may reach only public hosts. Fetch a public URL instead (to test a local server, use curl in Bash)."
)

// messages is the rule → message table: for each finding, the rule it is
// recorded under and its reason, written for the agent when the rule
// denies and for the human when it asks. In a text, {name} stands for the
// detail of that name and {name:q} for it Go-quoted.
var messages = [...]struct{ rule, text string }{
	msgInternalError: {RuleInternal,
		"claimcheck could not evaluate this {tool} call (internal error: {err}); the call is refused to be safe. Try a simpler form of the call."},
	msgNoPolicy: {RuleInternal, "claimcheck has no PreToolUse policy loaded; every tool call is refused until one is."},
	msgInputTooLarge: {RuleInputTooLarge,
		"claimcheck refused this {tool} call: its input is {size} bytes, more than the policy's limit of {limit}. Split the work into smaller calls."},
	msgInputNotJSON: {RuleInputMalformed, "claimcheck refused this {tool} call: its tool_input is not valid JSON."},
	msgInputUnreadable: {RuleInputMalformed,
		"claimcheck refused this {tool} call: its tool_input could not be read ({err}). Send the fields the tool documents."},
	msgNoCommand:   {RuleInputMalformed, "claimcheck refused this {tool} call: tool_input has no command string."},
	msgNoURL:       {RuleInputMalformed, "claimcheck refused this WebFetch call: tool_input has no url string."},
	msgNoTool:      {RuleInputMalformed, "claimcheck refused this tool call: the PreToolUse payload names no tool."},
	msgNoPathField: {RuleInputMalformed, "claimcheck refused this {tool} call: tool_input has no {field}."},
	msgNoPattern:   {RuleInputMalformed, "claimcheck refused this {tool} call: tool_input has no pattern."},
	msgNoLSPath:    {RuleInputMalformed, "claimcheck refused this LS call: tool_input has no path."},
	msgControlBytes: {RuleInputMalformed,
		"claimcheck refused this command: it contains NUL or other control bytes that a shell cannot run as written."},

	msgToolDenied: {RuleToolNotAllowed,
		"claimcheck refused the {tool} tool: the policy denies it ({pattern:q}) for {who}. Do the work with the tools you are allowed, or ask the user."},
	msgToolNotAllowed: {RuleToolNotAllowed,
		"claimcheck refused the {tool} tool: it is not allowed for {who}. Use one of the allowed tools ({allowed}), or ask the user."},
	msgToolUnlisted: {RuleToolNotAllowed,
		"claimcheck: the {tool} tool is not on the policy's list for {who}; allow it only if you expect this agent to use it."},
	msgToolAsk: {RuleToolAsk, "claimcheck: the policy asks before {who} uses the {tool} tool ({pattern:q})."},

	msgShellTooLong: {RuleShellTooLong,
		"claimcheck refused this command: it is {size} bytes, more than the policy's limit of {limit}. Put long scripts in a file in the project and run that."},
	msgUnparsable: {RuleShellUnparsable,
		"claimcheck cannot analyse this command: it does not parse as a Bash command ({err}). Write it as plain Bash."},
	msgNestedUnparsable: {RuleShellUnparsable,
		"claimcheck cannot analyse a shell script nested in this command: it does not parse as a Bash command ({err}). Write it as plain Bash."},
	msgTooDeep: {RuleShellTooDeep,
		"claimcheck cannot analyse this command: it nests shells (bash -c, eval, …) more than {limit} deep. Run the inner command directly."},
	msgInlineTooDeep: {RuleShellTooDeep,
		"claimcheck cannot analyse this command: {prog} evaluates code more than {limit} levels deep. Run the inner code directly."},
	msgTooManySteps: {RuleShellTooComplex,
		"claimcheck cannot analyse this command: it is too large or too deeply nested to analyse. Split it into simpler commands, or put it in a script file in the project."},
	msgTooManyWords: {RuleShellTooComplex,
		"claimcheck cannot analyse this command: a brace expansion produces too many words. Split it into simpler commands, or put it in a script file in the project."},

	msgRmRoot: {RuleRmRoot,
		"claimcheck refused {cmd}: it removes {path}, a system or home directory (or everything in one). Remove only the paths inside the project that you mean, e.g. rm -rf ./build."},
	msgFindDelete: {RuleFindDelete,
		"claimcheck refused {cmd}: it deletes files throughout {path}, a system or home directory. Search and delete inside the project only."},
	msgMkfs: {RuleMkfs,
		"claimcheck refused {cmd}: it creates a file system or wipes a device, destroying what is on it. Do not format disks from an agent; ask the user."},
	msgDDDevice: {RuleDDDevice,
		"claimcheck refused {cmd}: it writes to the device {path}, destroying its data. Write to an image file in the project instead (of=./disk.img)."},
	msgDeviceWrite: {RuleDeviceWrite,
		"claimcheck refused {what} writing to {path}: it overwrites a disk or memory device, destroying its data. Write to a file in the project instead."},
	msgShredDevice: {RuleShredDevice,
		"claimcheck refused {cmd}: it overwrites the device {path}, destroying its data. Do not wipe devices from an agent."},
	msgForkBomb: {RuleForkBomb,
		"claimcheck refused this command: the function {name:q} calls itself in a pipeline or in the background, a fork bomb that exhausts the machine's processes. Do not run it."},
	msgChmodRoot: {RuleChmodRoot, textChangesRoot},
	msgChownRoot: {RuleChownRoot, textChangesRoot},

	msgGitForcePush: {RuleGitForcePush,
		"claimcheck asks before {cmd}: a force push overwrites the remote branch, and commits others pushed are lost from it. Push without force (git pull --rebase first), or let the user decide."},
	msgGitDeleteRemote: {RuleGitDeleteRemote,
		"claimcheck asks before {cmd}: it deletes branches or tags on the remote. Let the user decide which remote refs go."},
	msgGitResetHard: {RuleGitResetHard,
		"claimcheck asks before {cmd}: git reset --hard throws away uncommitted changes, which git cannot bring back. Commit or stash them first (git stash), or use git reset --soft or --keep."},
	msgGitClean: {RuleGitClean,
		"claimcheck asks before {cmd}: git clean -f deletes untracked files, which git cannot bring back. See what it would delete with git clean -n, and delete only what you mean."},
	msgGitDiscard: {RuleGitDiscard,
		"claimcheck asks before {cmd}: it overwrites uncommitted changes in the working tree, which git cannot bring back. Commit or stash them first (git stash), or restore only the files you mean after checking git diff."},
	msgGitStashDrop: {RuleGitStashDrop,
		"claimcheck asks before {cmd}: it deletes stashed changes. Apply them (git stash pop) or let the user decide."},
	msgGitBranchDelete: {RuleGitBranchDelete,
		"claimcheck asks before {cmd}: it deletes a branch even if its commits are merged nowhere. Use git branch -d, which refuses to delete unmerged work."},
	msgGitRewrite: {RuleGitRewrite,
		"claimcheck asks before {cmd}: it rewrites the repository's history. Let the user decide."},

	msgDownloadedProgram: {RuleDownloadExec,
		"claimcheck refused {cmd}: the program to run is downloaded at run time. Download to a file in the project, read it, and run it by name if it is what you expect."},
	msgRunDownloaded: {RuleDownloadExec,
		"claimcheck refused {cmd}: {path} was just downloaded in this command and would run unread. Download it in one call, read it, then run it."},
	msgScriptFileDownloaded: {RuleDownloadExec,
		"claimcheck refused {prog} {path}: the file was just downloaded in this command and would run unread. Download it in one call, read it, then run it."},
	msgScriptDownloaded: {RuleDownloadExec,
		"claimcheck refused {what} with a downloaded script: running code fetched from the network unseen is not allowed. Download it to a file in the project, read it, and run it by name if it is what you expect."},
	msgStreamDownloaded: {RuleDownloadExec,
		"claimcheck refused this command: {what} runs a script downloaded from the network (curl … | sh) without anyone reading it. Download it to a file in the project, read it, and run it by name if it is what you expect."},
	msgDecodedProgram: {RuleDecodeExec,
		"claimcheck refused {cmd}: the program to run is decoded at run time. Run the command in plain text."},
	msgScriptDecoded: {RuleDecodeExec,
		"claimcheck refused {what} with a decoded script: obfuscated commands cannot be reviewed. Run the command in plain text."},
	msgStreamDecoded: {RuleDecodeExec, textStreamDecoded},
	msgEncodedCommand: {RuleDecodeExec,
		"claimcheck refused {cmd}: -EncodedCommand hides the script; obfuscated commands cannot be reviewed. Pass the command in plain text."},

	msgDynamicCommand: {RuleDynamicCommand,
		"claimcheck cannot tell which program {cmd} runs: its name comes from a variable or command substitution known only at run time. Write the program name literally."},
	msgDynamicEval:  {RuleDynamicEval, textDynamicScript},
	msgDynamicShell: {RuleDynamicShell, textDynamicScript},
	msgDynamicAlias: {RuleDynamicAlias,
		"claimcheck cannot fully analyse {cmd}: {name:q} is an alias defined in the same command, and aliases depend on shell options. Write the command the alias stands for."},
	msgRmEmptyVariable: {RuleDynamicRmRoot,
		"claimcheck: {cmd} removes {path} if a variable in it is empty or unset. Use ${VAR:?} so the command fails instead, or write the path literally."},
	msgRmUnknownDir: {RuleDynamicRmRoot,
		"claimcheck: {cmd} removes {path} in a directory known only at run time (after cd to a variable). Use an absolute or project-relative path."},
	msgInlineDynamic: {RuleDynamicInterp,
		"claimcheck cannot tell what {prog} runs: its inline code comes from a variable or command substitution known only at run time. Write the code literally, or put it in a file in the project."},
	msgInlineSpawnDynamic: {RuleDynamicInterp,
		"claimcheck cannot tell what {prog} runs: its inline code calls {name} with a command built at run time. Write the command as a string literal, or run it as a shell command directly."},

	msgHookExec: {RuleHookExec,
		"claimcheck refused {cmd}: claimcheck-hook is run by the agent CLI itself; an agent running it could forge events. Leave the hook to the CLI."},
	msgPrivateWrite: {RulePrivateAccess,
		"claimcheck refused {what} writing {path}: it is claimcheck's own data ({pattern}), which agents may not modify. Leave claimcheck's files alone; ask the user if something there needs changing."},
	msgHookWrite: {RulePrivateAccess, "claimcheck refused {what} writing {path}: it is, or holds, the claimcheck-hook executable."},
	msgPrivateRead: {RulePrivateAccess,
		"claimcheck refused {what} reading {path}: it is claimcheck's own data ({pattern}: keys, ledger, hook state), which agents may not read. You do not need it to do your task; claimcheck records what you do by itself."},
	msgDeniedCommand: {RuleDeniedCommand,
		"claimcheck refused {cmd}: {prefix:q} is an operator command the policy keeps from agents. If it is needed, ask the user to run it."},

	msgProtectedWrite: {RuleWriteProtected,
		"claimcheck refused {what} writing {path}: the path is protected by policy ({pattern}). Write inside the project instead, or ask the user to make this change."},
	msgConfigWrite: {RuleWriteProtected,
		"claimcheck refused {what} writing {path}: it is, or holds, the configuration of the agent's hooks or of claimcheck itself ({pattern}), which the agent under audit may not change. Leave it as it is; ask the user if it needs changing."},
	msgInlineConfig: {RuleWriteProtected,
		"claimcheck refused {prog} inline code naming {path}: it is, or holds, the configuration of the agent's hooks or of claimcheck itself ({pattern}), and claimcheck cannot tell whether inline code reads or writes a file, so inline code may not name it. To read it, use the Read tool; if it needs changing, ask the user."},
	msgSensitiveWrite: {RuleWriteSensitive,
		"claimcheck: {what} wants to write {path}, which matches the sensitive-file pattern {pattern} (files that usually hold secrets). Allow only if you expect this change."},
	msgSensitiveRead: {RuleReadSensitive,
		"claimcheck: {what} wants to read {path}, which matches the sensitive-file pattern {pattern} (files that usually hold secrets such as keys, tokens or passwords). Allow only if the agent needs these secrets."},

	msgURLTooLong: {RuleURLTooLong,
		"claimcheck refused this WebFetch: the URL is {size} bytes, more than the policy's limit of {limit}. Fetch a shorter URL."},
	msgURLMalformed: {RuleURLMalformed,
		"claimcheck refused to fetch {url}: {err}. Give WebFetch a plain absolute http(s) URL with an ordinary host name."},
	msgURLScheme: {RuleURLScheme,
		"claimcheck refused to fetch {url}: the {scheme}: scheme is not allowed; WebFetch may use only {schemes}. Read local files with the Read tool."},
	msgURLPrivate:      {RuleURLPrivate, textFetchHost},
	msgURLMetadata:     {RuleURLMetadata, textFetchHost},
	msgURLLocalhost:    {RuleURLLocalhost, textFetchHost},
	msgURLDeniedDomain: {RuleURLDeniedDomain, textFetchHost},
	msgShellMetadata: {RuleURLMetadata,
		"claimcheck refused {prog} fetching {url}: its host is {why}, which hands out the machine's cloud credentials. Do not query metadata endpoints; ask the user for what you need."},
}

// detail holds what a message names. Paths, commands and URLs are given
// as they are to be shown (shell.Path.String, cmdText, quote).
type detail struct {
	tool, field, who, pattern, allowed string
	cmd, prog, what, name, prefix      string
	path, url, host, scheme, schemes   string
	why, err                           string
	size, limit                        int
}

// value returns the detail a placeholder names.
func (d detail) value(name string) (string, bool) {
	switch name {
	case "tool":
		return d.tool, true
	case "field":
		return d.field, true
	case "who":
		return d.who, true
	case "pattern":
		return d.pattern, true
	case "allowed":
		return d.allowed, true
	case "cmd":
		return d.cmd, true
	case "prog":
		return d.prog, true
	case "what":
		return d.what, true
	case "name":
		return d.name, true
	case "prefix":
		return d.prefix, true
	case "path":
		return d.path, true
	case "url":
		return d.url, true
	case "host":
		return d.host, true
	case "scheme":
		return d.scheme, true
	case "schemes":
		return d.schemes, true
	case "why":
		return d.why, true
	case "err":
		return d.err, true
	case "size":
		return strconv.Itoa(d.size), true
	case "limit":
		return strconv.Itoa(d.limit), true
	}
	return "", false
}

// rule is the rule m is recorded under.
func (m msg) rule() string { return messages[m].rule }

// text fills m's template with d. A brace that does not open a known
// placeholder (${VAR:?}) stays as it is.
func (m msg) text(d detail) string {
	t := messages[m].text
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			return b.String()
		}
		name, quoted := strings.CutSuffix(t[i+1:i+j], ":q")
		v, ok := d.value(name)
		if !ok {
			b.WriteString(t[:i+1])
			t = t[i+1:]
			continue
		}
		if quoted {
			v = strconv.Quote(v)
		}
		b.WriteString(t[:i])
		b.WriteString(v)
		t = t[i+j+1:]
	}
}

// cmdText renders argv for a message.
func cmdText(argv []shell.Field) string {
	parts := make([]string, 0, len(argv))
	for _, f := range argv {
		s := shell.Display(f.S)
		if s == "" || strings.ContainsAny(s, " \t\n'\"") {
			s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
		parts = append(parts, s)
	}
	return quote(strings.Join(parts, " "))
}
