package pretool

import "strings"

// Codex CLI edits files with apply_patch, whose input is a patch envelope
// (*** Begin Patch ... *** End Patch) rather than a shell command: Codex
// hands it to the hook as the command of a Bash (or apply_patch) tool call,
// or the model runs `apply_patch` with the envelope in a heredoc. The
// files an envelope adds, updates, deletes or moves to are writes, checked
// against the write rules like an Edit's.

const patchBegin = "*** Begin Patch"

// patchHeaders are the envelope's file operation lines.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// patchTargets returns the paths the envelopes in cmd write, in order, and
// whether cmd is nothing but an envelope (not a shell script at all).
func patchTargets(cmd string) (paths []string, whole bool) {
	i := strings.Index(cmd, patchBegin)
	if i < 0 {
		return nil, false
	}
	whole = strings.TrimSpace(cmd[:i]) == ""
	for _, line := range strings.Split(cmd[i:], "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if p, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(p) != "" {
				paths = append(paths, strings.TrimSpace(p))
			}
		}
	}
	return paths, whole
}

// checkPatch applies the write rules to the files of the patch envelopes
// in cmd; it reports whether cmd is an envelope alone (nothing left for the
// shell analysis).
func (p *Policy) checkPatch(v *verdict, ctx *context, cmd string) bool {
	paths, whole := patchTargets(cmd)
	for _, path := range paths {
		p.checkWrite(v, ctx, ctx.resolve(filePath(path), ctx.cwd), writeOpts{what: "apply_patch"})
		if v.denied() {
			return true
		}
	}
	return whole
}
