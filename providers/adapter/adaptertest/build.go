package adaptertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// pkg is the import path of the feed adapter's main package.
const pkg = "github.com/agentproto/sentinel/providers/adapter/adaptertest/sentinel-adapter-feed"

// Build compiles the feed adapter into a fresh directory and returns the
// executable's path (named sentinel-adapter-feed).
func Build(t testing.TB) string {
	t.Helper()
	out, err := BuildTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BuildTo compiles the feed adapter into dir (for a TestMain, which has
// no testing.TB) and returns the executable's path.
func BuildTo(dir string) (string, error) {
	out := filepath.Join(dir, "sentinel-adapter-feed")
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the feed adapter: %w\n%s", err, b)
	}
	return out, nil
}

// Install links the built adapter bin into dir as sentinel-adapter-<slug>
// and returns that path.
func Install(t testing.TB, bin, dir, slug string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sentinel-adapter-"+slug)
	if err := os.Symlink(bin, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteFeed appends lines to the feed file at path.
func WriteFeed(t testing.TB, path string, lines ...Line) {
	t.Helper()
	if err := AppendFeed(path, lines...); err != nil {
		t.Fatal(err)
	}
}

// AppendFeed appends lines to the feed file at path.
func AppendFeed(path string, lines ...Line) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, l := range lines {
		raw, err := jsonLine(l)
		if err != nil {
			return err
		}
		if _, err := f.Write(raw); err != nil {
			return err
		}
	}
	return nil
}
