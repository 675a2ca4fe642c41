package adapter_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/adapter"
)

func writeExe(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/true\n"), 0o600))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

// TestDiscover: <home>/adapters, then adapters.paths, then PATH; the first
// of a slug wins; built-in slugs, malformed names, files that cannot run
// and files others may write are skipped with the reason.
func TestDiscover(t *testing.T) {
	home := t.TempDir()
	extra, onPath := t.TempDir(), t.TempDir()
	homeDir := filepath.Join(home, "adapters")
	first := writeExe(t, homeDir, "sentinel-adapter-gitlab", 0o755)
	writeExe(t, extra, "sentinel-adapter-gitlab", 0o755)
	jira := writeExe(t, extra, "sentinel-adapter-jira", 0o755)
	writeExe(t, extra, "sentinel-adapter-local-gh", 0o755)
	writeExe(t, extra, "sentinel-adapter-Bad_Name", 0o755)
	writeExe(t, onPath, "sentinel-adapter-notexec", 0o644)
	writeExe(t, onPath, "sentinel-adapter-shared", 0o775)
	linear := writeExe(t, onPath, "sentinel-adapter-linear", 0o755)
	writeExe(t, onPath, "unrelated", 0o755)

	dirs := adapter.SearchDirs(home, []string{extra}, onPath+string(os.PathListSeparator)+"/does/not/exist", false)
	require.Equal(t, []string{homeDir, extra, onPath, "/does/not/exist"}, dirs)
	found, skipped := adapter.Discover(adapter.Where{Dirs: dirs, Builtins: []string{"local-gh", "webhook", "agentpush", "fake"}})
	require.Equal(t, []adapter.Found{{Slug: "gitlab", Path: first}, {Slug: "jira", Path: jira}, {Slug: "linear", Path: linear}}, found)
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[filepath.Base(filepath.Dir(s.Path))+"/"+filepath.Base(s.Path)] = s.Reason
	}
	require.Len(t, reasons, 5, "%v", reasons)
	require.Contains(t, reasons[filepath.Base(extra)+"/sentinel-adapter-gitlab"], "shadowed by "+first)
	require.Contains(t, reasons[filepath.Base(extra)+"/sentinel-adapter-local-gh"], "cannot be shadowed")
	require.Contains(t, reasons[filepath.Base(extra)+"/sentinel-adapter-Bad_Name"], "lower-case letters")
	require.Contains(t, reasons[filepath.Base(onPath)+"/sentinel-adapter-notexec"], "not executable")
	require.Contains(t, reasons[filepath.Base(onPath)+"/sentinel-adapter-shared"], "writable by group or others")

	require.Equal(t, []string{homeDir, extra}, adapter.SearchDirs(home, []string{extra}, onPath, true), "no_path leaves PATH out")
}
