package compose

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is what TestMain prepared for the tests.
var env struct {
	// skip, when set, is why every test skips.
	skip string
	// compose is the compose command: docker compose, or docker-compose.
	compose []string
	// root is the repository root (the folder of docker-compose.yml).
	root string
	// image and natsImage are the tags built for this run.
	image, natsImage string
	// bin is the static sentinel binary the image holds, run on the host
	// by the chaos test (removed with the images at the end).
	bin string
}

func TestMain(m *testing.M) {
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) int {
	// testing.Short is only valid after flag parsing, which m.Run does;
	// parse here to decide whether to build anything.
	if hasShortFlag() {
		env.skip = "compose tests are skipped with -short"
		return m.Run()
	}
	if why := engineMissing(); why != "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "e2e/compose: CI=true and %s: the compose tests must run in CI\n", why)
			return 1
		}
		env.skip = why + ": the compose tests are skipped (install Docker and docker-compose, or the compose plugin, to run them)"
		return m.Run()
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/compose:", err)
		return 1
	}
	env.root = root
	tag := randomHex(4)
	env.image, env.natsImage = "sentinel-e2e:"+tag, "sentinel-nats-e2e:"+tag
	start := time.Now()
	cleanup, err := buildImages()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/compose: build the images:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e/compose: stage build images: %s\n", time.Since(start).Round(time.Millisecond))
	defer cleanup()
	return m.Run()
}

func hasShortFlag() bool {
	for _, a := range os.Args[1:] {
		if a == "-test.short" || a == "-test.short=true" {
			return true
		}
	}
	return false
}

// engineMissing returns why Docker cannot be used ("" when it can), and
// picks the compose command.
func engineMissing() string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := exec.LookPath("docker"); err != nil {
		return "docker is not installed"
	}
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return "no Docker engine answers (docker info: " + strings.TrimSpace(string(out)) + ")"
	}
	if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
		env.compose = []string{"docker", "compose"}
		return ""
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		env.compose = []string{p}
		return ""
	}
	return "neither `docker compose` nor `docker-compose` is installed"
}

// buildImages builds the static binaries and the two images the way
// `make image image-nats` does, under this run's tags.
func buildImages() (func(), error) {
	dir, err := os.MkdirTemp("", "sentinel-compose-")
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		_ = exec.Command("docker", "rmi", "-f", env.image, env.natsImage).Run()
		_ = os.RemoveAll(dir)
	}
	ctxs := map[string]string{"sentinel": filepath.Join(dir, "image"), "nats": filepath.Join(dir, "image-nats")}
	for _, c := range ctxs {
		if err := os.MkdirAll(filepath.Join(c, "home", "data"), 0o700); err != nil {
			cleanup()
			return nil, err
		}
		if err := os.Chmod(filepath.Join(c, "home", "data"), 0o700); err != nil {
			cleanup()
			return nil, err
		}
	}
	steps := [][]string{
		{"go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(ctxs["sentinel"], "sentinel"), "./cmd/sentinel"},
		{"go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(ctxs["nats"], "nats-server"), "github.com/nats-io/nats-server/v2"},
		{"cp", filepath.Join(ctxs["sentinel"], "sentinel"), filepath.Join(ctxs["nats"], "sentinel")},
		{"cp", filepath.Join(env.root, "deploy", "natsserver", "nats.conf"), ctxs["nats"]},
		{"docker", "build", "-q", "-t", env.image, "-f", filepath.Join(env.root, "Dockerfile"), ctxs["sentinel"]},
		{"docker", "build", "-q", "-t", env.natsImage, "-f", filepath.Join(env.root, "deploy", "natsserver", "Dockerfile"), ctxs["nats"]},
	}
	env.bin = filepath.Join(ctxs["sentinel"], "sentinel")
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cleanup()
			return nil, fmt.Errorf("%s: %w\n%s", strings.Join(s, " "), err, out)
		}
	}
	return cleanup, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// needDocker skips the test when TestMain found no usable engine.
func needDocker(t *testing.T) {
	t.Helper()
	if env.skip != "" {
		t.Skip(env.skip)
	}
}
