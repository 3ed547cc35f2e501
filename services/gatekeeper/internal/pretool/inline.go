package pretool

import "github.com/claimcheck/claimcheck/pkg/shell"

// Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r,
// lua -e, osascript -e, Rscript -e) is not shell, and claimcheck does not
// parse those languages. It reads (shell.ReadCode) what such a one-liner
// hands to the operating system, which in one line of any of them is
// spelled the same few ways:
//
//   - a call that runs a shell command (system, popen, execSync,
//     subprocess.run, backticks, qx{}, %x(), do shell script …): a command
//     written as a string literal, or a list of literals, is analysed as
//     shell one level deeper (so perl -e 'system("rm -rf /")' is refused
//     like rm -rf /); a command built at run time needs the human
//     (actions.dynamic, shell.dynamic.interpreter_exec);
//   - a call that deletes a tree (shutil.rmtree, FileUtils.rm_rf,
//     fs.rmSync, remove_dir_all, …) with a literal path: checked like
//     rm -r of that path;
//   - every other literal that could name a file: checked like a file the
//     command reads (claimcheck's own files are refused, secrets files need
//     the human); and, since whether the code reads or writes a file cannot
//     be told, one that names a file configuring the agent's hooks or
//     claimcheck (paths.configuration, Runtime.ConfigPaths, the hook's
//     executables), or a directory above one, is refused like a write
//     (python3 -c "open('.claude/settings.json','w')"). Reading them is
//     the Read tool's job.
//
// Code that builds names at run time (getattr(os, "sys"+"tem")) is beyond
// this reading, as it is beyond any static check; docs/gate.md
// ("PreToolUse") says so.

// inlineCode checks the inline code src of interpreter c.
func (a *analysis) inlineCode(c call, src shell.Field) {
	argv, prog, st, depth := c.argv, c.base, c.st, c.depth
	if src.Download || src.Decoded {
		a.nestedScript(prog+" inline code", src, st, depth)
		return
	}
	if src.Dyn {
		a.say(a.p.Actions.Dynamic, msgInlineDynamic, detail{prog: prog})
		return
	}
	code := shell.ReadCode(src.S, *c.prog.Lang)
	for _, s := range code.Steps {
		if a.w.Stop() {
			break
		}
		switch s.Use {
		case shell.RunsShell:
			a.w.Script(s.Text, st.Clone(), depth+1)
		case shell.EvalsCode:
			// Code in the interpreter's own language, one level deeper.
			if depth+1 > a.p.Limits.MaxShellDepth {
				a.say(a.p.Actions.Unparsable, msgInlineTooDeep, detail{prog: prog, limit: a.p.Limits.MaxShellDepth})
				return
			}
			deeper := c
			deeper.depth++
			a.inlineCode(deeper, shell.Field{S: s.Text})
		case shell.DeletesTree:
			a.deleteTarget(argv, shell.Field{S: s.Text}, st, true)
		}
	}
	// Spawn calls whose command is not a literal.
	for _, name := range code.Dynamic {
		a.say(a.p.Actions.Dynamic, msgInlineSpawnDynamic, detail{prog: prog, name: name})
		return
	}
	for _, l := range code.Literals {
		if a.w.Stop() {
			return
		}
		if !l.Used && shell.MaybePath(l.Text) {
			a.readTarget(prog+" inline code", shell.Field{S: l.Text}, st, readOpts{})
			a.inlineConfig(prog, l.Text, st)
		}
	}
}

// inlineConfig refuses a literal of inline code that names a file
// configuring the agent's hooks or claimcheck, or a directory above one.
func (a *analysis) inlineConfig(prog, lit string, st *shell.State) {
	f := a.ctx.resolve(lit, st.Cwd)
	if len(f.Segs) == 0 && !f.Abs {
		return
	}
	if a.ctx.isHook(f, true) {
		a.say(a.p.Actions.ProtectedWrite, msgInlineConfig, detail{prog: prog, path: f.String(), pattern: "claimcheck-hook"})
		return
	}
	if pat, ok := a.ctx.matchAny(a.ctx.config, f, true, true); ok {
		a.say(a.p.Actions.ProtectedWrite, msgInlineConfig, detail{prog: prog, path: f.String(), pattern: shell.Display(pat.raw)})
	}
}
