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
//
// It reads through AllSettings, which resolves every leaf with its
// environment override; viper's UnmarshalKey would miss CLAIMCHECK_* values
// for keys below key.
func Decode(v *viper.Viper, key string, out any) error {
	var in any = v.AllSettings()
	if key != "" {
		for _, part := range strings.Split(key, ".") {
			m, _ := in.(map[string]any)
			in = m[part]
		}
		if in == nil {
			return nil // nothing configured: keep out as it is
		}
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		ErrorUnused:      true,
		WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
	})
	if err != nil {
		return err
	}
	if err := dec.Decode(in); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}
