package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/claimcheck/claimcheck/pkg/config"
	"github.com/claimcheck/claimcheck/schemas"
)

// The firewall's and the levels' keys are read from the file and the
// environment like every gatekeeper key.
func TestFirewallAndLevelKeysAreConfigurable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "claimcheck.yaml")
	yaml := "gatekeeper:\n  firewall:\n    block_at: \"off\"\n  levels:\n    denials: 5\n    denials_level: RESTRICT\n" +
		"    contained: 4\n    contained_window: 30m\n    contained_level: HALT\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAIMCHECK_GATEKEEPER_LEVELS_ANOMALY_ENABLED", "true")
	t.Setenv("CLAIMCHECK_GATEKEEPER_LEVELS_ANOMALY_WINDOW", "2m")
	a := &app{env: Env{Getenv: func(string) string { return "" }}, v: config.New(), cfgFile: file}
	a.v.Set("data_dir", filepath.Join(dir, "data"))
	if err := config.ReadFile(a.v, file); err != nil {
		t.Fatal(err)
	}
	cfg, err := a.loadUp()
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Gatekeeper
	if g.Firewall.BlockAt != "off" || g.Firewall.WarnAt != "medium" || g.Levels.Denials != 5 || g.Levels.DenialsLevel != schemas.LevelRestrict ||
		g.Levels.InjectionHigh != schemas.LevelCheckpoint || !g.Levels.Anomaly.Enabled || g.Levels.Anomaly.Window != 2*time.Minute ||
		g.Levels.Contained != 4 || g.Levels.ContainedWindow != 30*time.Minute || g.Levels.ContainedLevel != schemas.LevelHalt {
		t.Fatalf("gatekeeper config: firewall %+v levels %+v", g.Firewall, g.Levels)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
}
