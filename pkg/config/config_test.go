package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type inner struct {
	URL  string        `mapstructure:"url"`
	Wait time.Duration `mapstructure:"wait"`
}

type cfg struct {
	NATS  inner  `mapstructure:"nats"`
	Level string `mapstructure:"level"`
	Count int    `mapstructure:"count"`
}

func load(t *testing.T, file string, args []string) (cfg, error) {
	t.Helper()
	v := New()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("nats-url", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := BindFlags(v, fs, map[string]string{"nats-url": "nats.url"}); err != nil {
		t.Fatal(err)
	}
	if err := SetDefaults(v, "", cfg{NATS: inner{URL: "nats://default:4222", Wait: time.Second}, Level: "info", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := ReadFile(v, file); err != nil {
		return cfg{}, err
	}
	var c cfg
	err := Decode(v, "", &c)
	return c, err
}

func TestPrecedenceDefaultsFileEnvFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("nats:\n  url: nats://file:4222\n  wait: 5s\nlevel: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, "", nil)
	if err != nil || c.NATS.URL != "nats://default:4222" || c.NATS.Wait != time.Second || c.Count != 1 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = load(t, file, nil)
	if err != nil || c.NATS.URL != "nats://file:4222" || c.NATS.Wait != 5*time.Second || c.Level != "debug" {
		t.Fatalf("file: %+v %v", c, err)
	}
	t.Setenv("CLAIMCHECK_NATS_URL", "nats://env:4222")
	t.Setenv("CLAIMCHECK_COUNT", "7")
	c, err = load(t, file, nil)
	if err != nil || c.NATS.URL != "nats://env:4222" || c.Count != 7 {
		t.Fatalf("env: %+v %v", c, err)
	}
	// The nested key through Decode of its subtree too.
	v := New()
	_ = SetDefaults(v, "", cfg{NATS: inner{URL: "x"}})
	var in inner
	if err := Decode(v, "nats", &in); err != nil || in.URL != "nats://env:4222" {
		t.Fatalf("subtree decode ignores env: %+v %v", in, err)
	}
	c, err = load(t, file, []string{"--nats-url", "nats://flag:4222"})
	if err != nil || c.NATS.URL != "nats://flag:4222" {
		t.Fatalf("flag: %+v %v", c, err)
	}
}

func TestStrictDecoding(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"nats:\n  urll: x\n":       "urll",
		"count: many\n":            "count",
		"nats:\n  wait: forever\n": "wait",
	} {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := load(t, file, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want it to name %q", body, err, want)
		}
	}
	if _, err := load(t, filepath.Join(dir, "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("nats: [unclosed\n"), 0o600)
	if _, err := load(t, bad, nil); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("malformed file: %v", err)
	}
}
