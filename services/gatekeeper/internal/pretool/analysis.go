package pretool

import (
	"strings"

	"github.com/claimcheck/claimcheck/pkg/shell"
)

// analysis is the classification of one shell command: the shell.Walker
// evaluates it, and the analysis, its Host, judges each simple command and
// redirection the walker finds against the policy.
type analysis struct {
	p   *Policy
	ctx *context
	v   *verdict
	w   *shell.Walker
}

// checkCommand classifies a Bash (or PowerShell) command line.
func (p *Policy) checkCommand(v *verdict, ctx *context, cmd string) {
	if len(cmd) > p.Limits.MaxCommandBytes {
		v.say(Deny, msgShellTooLong, detail{size: len(cmd), limit: p.Limits.MaxCommandBytes})
		return
	}
	if strings.ContainsAny(cmd, "\x00\x01\x02") {
		v.say(Deny, msgControlBytes, detail{})
		return
	}
	if p.checkPatch(v, ctx, cmd) {
		return
	}
	a := &analysis{p: p, ctx: ctx, v: v}
	cfg := shell.Config{MaxDepth: p.Limits.MaxShellDepth}
	if ctx.homeSet {
		cfg.Home = ctx.home
	}
	a.w = shell.NewWalker(a, cfg)
	a.w.Script(cmd, shell.NewState(ctx.cwd), 0)
}

func (a *analysis) say(act string, m msg, d detail) { a.v.say(action(act), m, d) }

// Decided reports that the call is denied already: nothing found later
// can change that.
func (a *analysis) Decided() bool { return a.v.denied() }

// Trouble records why the command, or a script nested in it, cannot be
// analysed.
func (a *analysis) Trouble(t shell.Trouble) {
	switch t.Kind {
	case shell.Unparsable:
		m := msgUnparsable
		if t.Depth > 0 {
			m = msgNestedUnparsable
		}
		a.say(a.p.Actions.Unparsable, m, detail{err: t.Err.Error()})
	case shell.TooDeep:
		a.say(a.p.Actions.Unparsable, msgTooDeep, detail{limit: a.p.Limits.MaxShellDepth})
	case shell.TooManySteps:
		a.say(a.p.Actions.Unparsable, msgTooManySteps, detail{})
	case shell.TooManyWords:
		a.say(a.p.Actions.Unparsable, msgTooManyWords, detail{})
	}
}

// ForkBomb refuses a function that calls itself in a pipeline or in the
// background.
func (a *analysis) ForkBomb(name string) {
	a.say(a.p.Actions.Destructive, msgForkBomb, detail{name: name})
}

// Redirect checks the file of a redirection: bash's /dev/tcp and /dev/udp
// are URLs, an input file is read, an output file written.
func (a *analysis) Redirect(r shell.Redirect, st *shell.State) {
	f := r.Path
	if f.Abs && len(f.Segs) >= 3 && f.Segs[0] == "dev" && (f.Segs[1] == "tcp" || f.Segs[1] == "udp") {
		host := f.Segs[2]
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		a.p.checkShellURL(a.v, "a /dev/"+f.Segs[1]+" redirection", "http://"+host+"/")
	}
	switch r.Access {
	case shell.Read:
		a.p.checkRead(a.v, a.ctx, f, readOpts{what: "an input redirection (<)"})
	case shell.Write:
		a.writeTarget(r.Op, r.Target, st, false)
	}
}
