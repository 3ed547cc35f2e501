package hook

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/claimcheck/claimcheck/pkg/hookconfig"
	"github.com/claimcheck/claimcheck/schemas"
)

// hookConfig reads the hook configuration this session starts under (at
// SessionStart): every settings layer, judged against what `claimcheck
// hooks install` recorded in the state dir. It never fails: what it cannot
// read is recorded as an error. The project is $CLAUDE_PROJECT_DIR, else
// the payload's cwd.
func (h *hook) hookConfig(raw []byte) (cfg *schemas.HookConfig) {
	defer func() {
		if r := recover(); r != nil {
			cfg = &schemas.HookConfig{V: 1, Verdict: schemas.HooksNone, Layers: []schemas.HookLayer{},
				Error: clipErr(fmt.Sprintf("reading the hook configuration failed: %v", r))}
		}
	}()
	project := h.cfg.ProjectDir
	if project == "" {
		var p struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(raw, &p, json.RejectUnknownMembers(false)) == nil && filepath.IsAbs(p.Cwd) {
			project = p.Cwd
		}
	}
	var exp hookconfig.Expect
	var recErr error
	if h.cfg.StateDir != "" {
		in, ok, err := hookconfig.LoadInstallation(filepath.Join(h.cfg.StateDir, hookconfig.RecordFile))
		if ok {
			exp = in.Expect()
		}
		recErr = err
	}
	rec := hookconfig.Read(hookconfig.Sources{ManagedDir: h.cfg.ManagedSettingsDir, Home: h.cfg.Home, ProjectDir: project}, exp).Record()
	switch {
	case recErr != nil:
		rec.Error = clipErr(fmt.Sprintf("install record: %v", recErr))
	case project == "":
		rec.Error = "no project directory ($CLAUDE_PROJECT_DIR and the payload's cwd are unset): project settings not read"
	}
	return rec
}

// clipErr keeps an error within the schema's 1024 characters, valid UTF-8.
func clipErr(s string) string {
	if len(s) > 1000 {
		s = s[:1000]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
