package adapter

import (
	"strings"
)

// passEnv are the variables of the node's environment an adapter gets:
// what a program needs to run, reach the network and trust its CAs.
// Nothing else of the node's environment (its API and cluster tokens, the
// GitHub token) goes to a third-party process.
var passEnv = []string{
	"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
}

// EnvPrefix is the prefix of the node's variables an adapter of slug gets
// besides passEnv: GITLAB_ for gitlab, MY_THING_ for my-thing.
func EnvPrefix(slug string) string {
	return strings.ToUpper(strings.ReplaceAll(slug, "-", "_")) + "_"
}

// adapterEnv returns the environment of slug's process, drawn from the
// node's environ.
func adapterEnv(slug string, environ []string) []string {
	prefix := EnvPrefix(slug)
	keep := map[string]bool{}
	for _, k := range passEnv {
		keep[k] = true
	}
	out := make([]string, 0, len(passEnv)+4)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if keep[k] || strings.HasPrefix(k, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// secretEnvValues returns the values of the variables of env whose names
// say they hold a secret (…TOKEN, …KEY, …SECRET, …PASSWORD): the redactor
// removes them from what the adapter writes.
func secretEnvValues(env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		for _, s := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD"} {
			if strings.HasSuffix(u, s) && len(v) >= 4 {
				out = append(out, v)
				break
			}
		}
	}
	return out
}
