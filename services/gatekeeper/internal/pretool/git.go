package pretool

import (
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// gitGlobalValued are git's global options that take the next word as
// their value (git -C dir push …).
var gitGlobalValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--exec-path": true, "--config-env": true, "--super-prefix": true, "--list-cmds": true}

// git asks before the git operations whose loss the user cannot get back
// from the repository (actions.lost_work): force pushes, deleting remote
// branches or tags, discarding uncommitted changes (reset --hard, clean
// -f, checkout -- ., restore), dropping stashes, force-deleting branches
// and rewriting history. Their safe twins (push without force, reset
// --soft, clean -n, restore --staged, stash pop, branch -d) pass.
func (a *analysis) git(argv []shell.Field) {
	args := argv[1:]
	for len(args) > 0 {
		s := args[0].S
		switch {
		case gitGlobalValued[s]:
			args = args[min(2, len(args)):]
			continue
		case strings.HasPrefix(s, "-"):
			args = args[1:]
			continue
		}
		break
	}
	if len(args) == 0 {
		return
	}
	sub, rest := args[0].S, fieldStrings(args[1:])
	d := detail{cmd: cmdText(argv)}
	switch sub {
	case "push":
		if m, ok := gitPush(rest); ok {
			a.say(a.p.Actions.LostWork, m, d)
		}
	case "reset":
		if hasFlag(rest, "--hard", "") {
			a.say(a.p.Actions.LostWork, msgGitResetHard, d)
		}
	case "clean":
		if hasFlag(rest, "--force", "f") && !hasFlag(rest, "--dry-run", "n") {
			a.say(a.p.Actions.LostWork, msgGitClean, d)
		}
	case "checkout":
		if hasFlag(rest, "--force", "f") || pathspecAfterDashes(rest) || contains(rest, ".") {
			a.say(a.p.Actions.LostWork, msgGitDiscard, d)
		}
	case "restore":
		staged := hasFlag(rest, "--staged", "S")
		worktree := hasFlag(rest, "--worktree", "W")
		if (!staged || worktree) && len(operands(rest)) > 0 {
			a.say(a.p.Actions.LostWork, msgGitDiscard, d)
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			a.say(a.p.Actions.LostWork, msgGitStashDrop, d)
		}
	case "branch":
		if hasFlag(rest, "", "D") || (hasFlag(rest, "--delete", "d") && hasFlag(rest, "--force", "f")) {
			a.say(a.p.Actions.LostWork, msgGitBranchDelete, d)
		}
	case "filter-branch", "filter-repo":
		a.say(a.p.Actions.LostWork, msgGitRewrite, d)
	}
}

// gitPush classifies a push: forced (a force option, or a refspec with +)
// or deleting remote refs (--delete, --prune, --mirror, a refspec :dst).
func gitPush(args []string) (msg, bool) {
	if hasFlag(args, "--force", "f") || hasFlag(args, "--force-with-lease", "") || hasFlag(args, "--force-if-includes", "") {
		return msgGitForcePush, true
	}
	if hasFlag(args, "--delete", "d") || hasFlag(args, "--prune", "") || hasFlag(args, "--mirror", "") {
		return msgGitDeleteRemote, true
	}
	ops := operands(args)
	for i, op := range ops {
		if i == 0 {
			continue // the remote
		}
		switch {
		case strings.HasPrefix(op, "+"):
			return msgGitForcePush, true
		case strings.HasPrefix(op, ":") && len(op) > 1:
			return msgGitDeleteRemote, true
		}
	}
	return 0, false
}

// hasFlag reports a long option (also as --opt=value) or a short letter,
// alone or in a cluster (-fd), before a "--".
func hasFlag(args []string, long, short string) bool {
	for _, s := range args {
		switch {
		case s == "--":
			return false
		case long != "" && (s == long || strings.HasPrefix(s, long+"=")):
			return true
		case short != "" && len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s[1:], short):
			return true
		}
	}
	return false
}

// operands are the arguments that are not options (all after "--").
func operands(args []string) []string {
	var out []string
	for i, s := range args {
		if s == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(s, "-") {
			out = append(out, s)
		}
	}
	return out
}

// pathspecAfterDashes: `git checkout [<rev>] -- <path>…` overwrites those
// paths' uncommitted changes.
func pathspecAfterDashes(args []string) bool {
	for i, s := range args {
		if s == "--" {
			return i+1 < len(args)
		}
	}
	return false
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == "--" {
			continue
		}
		if a == s {
			return true
		}
	}
	return false
}

func fieldStrings(fs []shell.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.S
	}
	return out
}
