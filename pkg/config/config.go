// Package config loads claimcheck configuration with one viper instance per
// process: defaults (from a typed DefaultConfig) → optional file → environment
// (CLAIMCHECK_ prefix, "." → "_") → flags. Decoding is strict: an unknown key
// in a file is an error naming the key.
package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment variable (CLAIMCHECK_NATS_URL).
const EnvPrefix = "CLAIMCHECK"

// New returns a viper instance reading CLAIMCHECK_* environment variables.
func New() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	return v
}

// SetDefaults registers every leaf of defaults (a struct with mapstructure
// tags) under prefix ("" for the root), so that environment variables and
// flags can override keys that no file mentions.
func SetDefaults(v *viper.Viper, prefix string, defaults any) error {
	var m map[string]any
	if err := mapstructure.Decode(defaults, &m); err != nil {
		return fmt.Errorf("config defaults: %w", err)
	}
	setLeaves(v, prefix, m)
	return nil
}

func setLeaves(v *viper.Viper, prefix string, m map[string]any) {
	for k, val := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := val.(map[string]any); ok {
			setLeaves(v, key, sub)
			continue
		}
		if rv := reflect.ValueOf(val); rv.Kind() == reflect.Struct {
			var sub map[string]any
			if err := mapstructure.Decode(val, &sub); err == nil {
				setLeaves(v, key, sub)
				continue
			}
		}
		v.SetDefault(key, val)
	}
}

// ReadFile merges a YAML/JSON/TOML file into v. An empty path is a no-op.
func ReadFile(v *viper.Viper, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	v.SetConfigFile(path)
	if err := v.MergeInConfig(); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// BindFlags binds each flag to a key: flag name → key.
func BindFlags(v *viper.Viper, fs *pflag.FlagSet, keys map[string]string) error {
	var errs []error
	for flag, key := range keys {
		f := fs.Lookup(flag)
		if f == nil {
			errs = append(errs, fmt.Errorf("bind flag --%s: no such flag", flag))
			continue
		}
		if err := v.BindPFlag(key, f); err != nil {
			errs = append(errs, fmt.Errorf("bind flag --%s: %w", flag, err))
		}
	}
	return errors.Join(errs...)
}

// Decode decodes the subtree at key ("" for everything) into out, rejecting
// keys out does not have. Durations are Go durations ("30s", "720h").
func Decode(v *viper.Viper, key string, out any) error {
	opts := []viper.DecoderConfigOption{func(c *mapstructure.DecoderConfig) {
		c.ErrorUnused = true
		c.WeaklyTypedInput = true
		c.DecodeHook = mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		)
	}}
	var err error
	if key == "" {
		err = v.Unmarshal(out, opts...)
	} else {
		err = v.UnmarshalKey(key, out, opts...)
	}
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}
