package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentproto/sentinel/runtime/app"
)

// envAliases maps extra environment variables to config keys.
var envAliases = map[string]string{
	"AGENTPROTO_PUBLIC_HTTP_ORIGIN": "public_url",
}

// LoadConfig builds the node config: defaults, then <home>/config.yaml,
// then AGENTPROTO_* environment variables (AGENTPROTO_PUBLIC_URL,
// AGENTPROTO_NATS_SYNC_ALWAYS, ...; a secret key may come from the file
// named by AGENTPROTO_<KEY>_FILE instead: applySecretFiles), then the
// flags that were set.
// flagKeys maps flag names to config keys.
func LoadConfig(cmd *cobra.Command, flagKeys map[string]string) (app.Config, error) {
	def := app.DefaultConfig()
	v := viper.New()
	setDefaults(v, "", reflect.ValueOf(def))
	v.SetEnvPrefix("AGENTPROTO")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for env, key := range envAliases {
		if val, ok := os.LookupEnv(env); ok && os.Getenv("AGENTPROTO_"+strings.ToUpper(strings.ReplaceAll(key, ".", "_"))) == "" {
			v.Set(key, val)
		}
	}
	if err := applySecretFiles(v); err != nil {
		return app.Config{}, err
	}
	home := resolveHome(cmd)
	v.SetDefault("home", home)
	if home != "" {
		v.SetConfigFile(filepath.Join(home, "config.yaml"))
		if err := v.ReadInConfig(); err != nil {
			var nf viper.ConfigFileNotFoundError
			if !errors.As(err, &nf) && !errors.Is(err, os.ErrNotExist) {
				return app.Config{}, fmt.Errorf("read %s: %w", filepath.Join(home, "config.yaml"), err)
			}
		}
	}
	for name, key := range flagKeys {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			if err := v.BindPFlag(key, f); err != nil {
				return app.Config{}, err
			}
		}
	}
	if f := cmd.Flags().Lookup("home"); f != nil && f.Changed {
		v.Set("home", f.Value.String())
	}
	var cfg app.Config
	if err := v.Unmarshal(&cfg); err != nil {
		return app.Config{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// resolveHome returns --home, else AGENTPROTO_HOME, else ~/.agentproto.
func resolveHome(cmd *cobra.Command) string {
	if f := lookupFlag(cmd, "home"); f != nil && f.Changed {
		return f.Value.String()
	}
	if h := os.Getenv("AGENTPROTO_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".agentproto")
	}
	return ""
}

func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}

// setDefaults registers every leaf of the default config with viper so
// AutomaticEnv can override any key.
func setDefaults(v *viper.Viper, prefix string, rv reflect.Value) {
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		if tag == ",squash" {
			setDefaults(v, prefix, rv.Field(i))
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		fv := rv.Field(i)
		if fv.Kind() == reflect.Struct {
			setDefaults(v, key, fv)
			continue
		}
		v.SetDefault(key, fv.Interface())
	}
}
