package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// LocalKinds and ComposeKinds are the fault kinds each target injects.
var (
	LocalKinds   = []Kind{Kill, Pause, Restart}
	ComposeKinds = []Kind{Kill, Pause, Restart, Partition}
)

// ComposeOptions select a running compose project.
type ComposeOptions struct {
	// Project is the compose project name (docker compose -p).
	Project string
	// Services are the node services (default node1, node2, node3).
	Services []string
	// Port is the API port inside the containers (default 7717); each
	// node is reached on the host port Docker maps it to, on 127.0.0.1.
	Port int
	// Token is the service's API token (default: $SENTINEL_TOKEN, else
	// $AGENTPROTO_TOKEN: never a flag, so never in argv).
	Token string
}

// composeTarget drives a compose project's containers with the docker
// CLI only: containers are found by their compose labels (so docker
// compose v2 and docker-compose v1 projects alike), reached on their
// 127.0.0.1 host ports, and cut off with docker network disconnect.
type composeTarget struct {
	o          ComposeOptions
	containers []string
	networks   []string // each container's project network
	mu         sync.Mutex
	urls       []string
	noticed    time.Duration
	hc         *http.Client
}

// AttachCompose finds the project's node containers and their host ports.
func AttachCompose(ctx context.Context, o ComposeOptions) (Target, error) {
	if o.Project == "" {
		return nil, errors.New("--compose needs the compose project's name")
	}
	if len(o.Services) == 0 {
		o.Services = []string{"node1", "node2", "node3"}
	}
	if o.Port == 0 {
		o.Port = 7717
	}
	if o.Token == "" {
		o.Token = os.Getenv("SENTINEL_TOKEN")
	}
	if o.Token == "" {
		o.Token = os.Getenv("AGENTPROTO_TOKEN")
	}
	if o.Token == "" {
		return nil, errors.New("--compose needs the service's API token in SENTINEL_TOKEN (as the compose file does) or AGENTPROTO_TOKEN")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	c := &composeTarget{o: o, hc: &http.Client{Transport: tr, Timeout: 5 * time.Second}}
	for _, svc := range o.Services {
		out, err := docker(ctx, "ps", "-aq", "--filter", "label=com.docker.compose.project="+o.Project,
			"--filter", "label=com.docker.compose.service="+svc)
		if err != nil {
			return nil, err
		}
		ids := strings.Fields(out)
		if len(ids) != 1 {
			return nil, fmt.Errorf("compose project %s: service %s has %d containers, want 1", o.Project, svc, len(ids))
		}
		nets, err := docker(ctx, "inspect", "--format", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", ids[0])
		if err != nil {
			return nil, err
		}
		nf := strings.Fields(nets)
		if len(nf) != 1 {
			return nil, fmt.Errorf("compose project %s: %s is on %d networks (%s), want 1", o.Project, svc, len(nf), nets)
		}
		c.containers, c.networks = append(c.containers, ids[0]), append(c.networks, nf[0])
		u, err := c.hostURL(ctx, len(c.containers)-1)
		if err != nil {
			return nil, err
		}
		c.urls = append(c.urls, u)
	}
	return c, nil
}

// hostURL is node i's API on its 127.0.0.1 host port.
func (c *composeTarget) hostURL(ctx context.Context, i int) (string, error) {
	out, err := docker(ctx, "port", c.containers[i], fmt.Sprintf("%d/tcp", c.o.Port))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Fields(out) {
		if strings.HasPrefix(line, "127.0.0.1:") {
			return "http://" + line, nil
		}
	}
	return "", fmt.Errorf("%s publishes port %d on no 127.0.0.1 host port (%q)", c.o.Services[i], c.o.Port, strings.TrimSpace(out))
}

func (c *composeTarget) Name() string     { return "compose " + c.o.Project }
func (c *composeTarget) Names() []string  { return append([]string(nil), c.o.Services...) }
func (c *composeTarget) Token() string    { return c.o.Token }
func (c *composeTarget) FeedPath() string { return "" }
func (c *composeTarget) Kinds() []Kind    { return ComposeKinds }
func (c *composeTarget) URLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.urls...)
}

func (c *composeTarget) Kill(ctx context.Context, i int) error {
	_, err := docker(ctx, "kill", c.containers[i])
	return err
}

// Start starts node i's container and waits until its host port answers
// /readyz 200.
func (c *composeTarget) Start(ctx context.Context, i int) error {
	if _, err := docker(ctx, "start", c.containers[i]); err != nil {
		return err
	}
	return c.waitReady(ctx, i)
}

func (c *composeTarget) Stop(ctx context.Context, i int) error {
	_, err := docker(ctx, "stop", "-t", "30", c.containers[i])
	return err
}

func (c *composeTarget) Pause(ctx context.Context, i int) error {
	_, err := docker(ctx, "kill", "--signal", "SIGSTOP", c.containers[i])
	return err
}

func (c *composeTarget) Resume(ctx context.Context, i int) error {
	_, err := docker(ctx, "kill", "--signal", "SIGCONT", c.containers[i])
	return err
}

// cutNoticeTimeout bounds the wait for a cut-off node to say so.
const cutNoticeTimeout = 30 * time.Second

// Cut disconnects node i from its network (which also removes its host
// port mapping), then waits until the node itself reports it cannot
// serve, looked at from inside with `docker exec <container> /sentinel
// health` (exit 1): the hold of a partition starts once the cut is
// felt. The wait is noted for the report (CutNoticed).
func (c *composeTarget) Cut(ctx context.Context, i int) error {
	t0 := time.Now()
	if _, err := docker(ctx, "network", "disconnect", c.networks[i], c.containers[i]); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, cutNoticeTimeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ectx, ecancel := context.WithTimeout(wctx, 10*time.Second)
		err := exec.CommandContext(ectx, "docker", "exec", c.containers[i], "/sentinel", "health").Run()
		ecancel()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			c.mu.Lock()
			c.noticed = time.Since(t0)
			c.mu.Unlock()
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%s still said it was ready %s after the cut (docker exec ... /sentinel health): %w",
				c.o.Services[i], cutNoticeTimeout, wctx.Err())
		case <-tick.C:
		}
	}
}

// CutNoticed is how long the last cut-off node took to report it could
// not serve.
func (c *composeTarget) CutNoticed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noticed
}

// Reconnect joins node i to its network again under its service alias
// (peers route to it by that name).
func (c *composeTarget) Reconnect(ctx context.Context, i int) error {
	_, err := docker(ctx, "network", "connect", "--alias", c.o.Services[i], c.networks[i], c.containers[i])
	return err
}

func (c *composeTarget) WaitHealthy(ctx context.Context) error {
	for i := range c.containers {
		if err := c.waitReady(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// waitReady waits until node i answers /readyz 200 on its host port (read
// again: a port mapping comes back with the network).
func (c *composeTarget) waitReady(ctx context.Context, i int) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		u, err := c.hostURL(ctx, i)
		if err == nil {
			c.mu.Lock()
			c.urls[i] = u
			c.mu.Unlock()
			last = readyz(ctx, c.hc, u)
			if last == nil {
				return nil
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", c.o.Services[i], errors.Join(ctx.Err(), last))
		case <-tick.C:
		}
	}
}

func (c *composeTarget) Logs() string {
	var b strings.Builder
	for i, id := range c.containers {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, _ := exec.CommandContext(ctx, "docker", "logs", "--tail", "40", id).CombinedOutput()
		cancel()
		fmt.Fprintf(&b, "\n--- %s ---\n%s", c.o.Services[i], out)
	}
	return b.String()
}

// Close leaves the project running (it is the operator's), but never a
// node paused or cut off by this run.
func (c *composeTarget) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range c.containers {
		_ = c.Resume(ctx, i)
	}
	c.hc.CloseIdleConnections()
}

// readyz checks one node's /readyz.
func readyz(ctx context.Context, hc *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/readyz: %d", u, resp.StatusCode)
	}
	return nil
}

// docker runs the docker CLI, bounded, and returns its standard output.
func docker(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
