package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// project is one compose project of a test: its own name, files, free
// host ports and secrets. Its cleanup brings it down with -v whatever
// happened.
type project struct {
	t     *testing.T
	name  string
	files []string
	env   []string
	// ports are the host ports by service, 127.0.0.1 only.
	ports map[string]int
	token string
}

// stage runs fn and logs how long it took.
func stage(t *testing.T, name string, fn func()) {
	t.Helper()
	start := time.Now()
	fn()
	t.Logf("stage %s: %s", name, time.Since(start).Round(time.Millisecond))
}

// newProject prepares a project over file (relative to the repository
// root) plus an override enabling the test-only fake provider on services
// (never in the shipped file). portVars names the SENTINEL_* variable of
// each published service's host port.
func newProject(t *testing.T, file string, portVars map[string]string, services ...string) *project {
	t.Helper()
	p := &project{t: t, name: "sentinele2e" + randomHex(4), ports: map[string]int{}, token: randomHex(32)}
	override := filepath.Join(t.TempDir(), "fake-provider.yml")
	var b strings.Builder
	b.WriteString("# Test-only: enables the scriptable fake provider.\nservices:\n")
	for _, s := range services {
		fmt.Fprintf(&b, "  %s:\n    environment:\n      AGENTPROTO_TESTING_FAKE_PROVIDER: \"true\"\n      AGENTPROTO_LOG_LEVEL: debug\n", s)
	}
	require.NoError(t, os.WriteFile(override, []byte(b.String()), 0o600))
	p.files = []string{filepath.Join(env.root, file), override}
	p.env = append(os.Environ(),
		"SENTINEL_IMAGE="+env.image, "SENTINEL_NATS_IMAGE="+env.natsImage,
		"SENTINEL_TOKEN="+p.token, "SENTINEL_CLUSTER_TOKEN="+randomHex(32), "SENTINEL_NATS_PASSWORD="+randomHex(32))
	for svc, v := range portVars {
		port := freePort(t)
		p.ports[svc] = port
		p.env = append(p.env, fmt.Sprintf("%s=%d", v, port))
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.compose(2*time.Minute, "logs", "--no-color", "--tail", "80")
			t.Logf("logs of the failed project:\n%s", out)
		}
		start := time.Now()
		if out, err := p.compose(3*time.Minute, "down", "-v", "--remove-orphans", "-t", "5"); err != nil {
			t.Errorf("down -v: %v\n%s", err, out)
		}
		t.Logf("stage down -v: %s", time.Since(start).Round(time.Millisecond))
	})
	return p
}

// freePort is a host port for a published service, below the ephemeral
// range (e2etest.FreePorts): a container starts seconds after the port is
// chosen, and another process's connection must not take it meanwhile.
func freePort(t *testing.T) int {
	t.Helper()
	return e2etest.FreePorts(t, 1)[0]
}

// compose runs the compose command on the project and returns its output.
func (p *project) compose(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	full := append([]string{}, env.compose[1:]...)
	for _, f := range p.files {
		full = append(full, "-f", f)
	}
	full = append(full, "-p", p.name)
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, env.compose[0], full...)
	cmd.Dir = env.root
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs compose and fails the test on an error.
func (p *project) must(timeout time.Duration, args ...string) string {
	p.t.Helper()
	out, err := p.compose(timeout, args...)
	require.NoError(p.t, err, "%s %s:\n%s", strings.Join(env.compose, " "), strings.Join(args, " "), out)
	return out
}

// up starts the project detached (compose v1 has no --wait: waitHealthy).
func (p *project) up() { p.must(3*time.Minute, "up", "-d") }

// container is the id of a service's container.
func (p *project) container(svc string) string {
	p.t.Helper()
	id := strings.TrimSpace(p.must(time.Minute, "ps", "-q", svc))
	require.NotEmpty(p.t, id, "service %s has no container", svc)
	return id
}

// health is the Docker health status of a service ("healthy", "starting",
// "unhealthy") or its state when it has no health check.
func (p *project) health(svc string) string {
	out, err := exec.Command("docker", "inspect", "--format",
		"{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}", p.container(svc)).CombinedOutput()
	if err != nil {
		return "inspect failed: " + strings.TrimSpace(string(out))
	}
	return strings.TrimSpace(string(out))
}

// waitHealthy waits until every service is healthy.
func (p *project) waitHealthy(within time.Duration, services ...string) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var states []string
		all := true
		for _, s := range services {
			h := p.health(s)
			states = append(states, s+"="+h)
			all = all && h == "healthy"
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("not healthy within %s: %s", within, strings.Join(states, " "))
		}
		time.Sleep(time.Second) // polling an external process's state: no event to wait on
	}
}

// exec runs a command in a service's container and returns its exit code
// and output.
func (p *project) exec(svc string, args ...string) (int, string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", append([]string{"exec", p.container(svc)}, args...)...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	p.t.Fatalf("docker exec %s %v: %v\n%s", svc, args, err, out)
	return -1, ""
}

// network is the project's default network.
func (p *project) network() string { return p.name + "_default" }

// docker runs a docker command and fails the test on an error.
func (p *project) docker(args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	require.NoError(p.t, err, "docker %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// url is a published service's base URL on the host.
func (p *project) url(svc string) string {
	return fmt.Sprintf("http://127.0.0.1:%d", p.ports[svc])
}
