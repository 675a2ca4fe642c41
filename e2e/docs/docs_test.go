// Package docs runs the shell examples of README.md and docs/*.md
// (issue 31): every ```sh block is marked, on the line before it, either
// `<!-- runnable -->` (it starts what it needs, as README's "Try it"
// starts the node), `<!-- runnable: node -->` (it runs against a node the
// test starts on the fresh home first) or `<!-- not runnable: <why> -->`.
// The runnable blocks of one file run in order, as one bash script with
// `set -euo pipefail`, on a fresh $HOME, with the built binary as
// ./sentinel and on PATH, the fake GitHub (providers/github/githubtest)
// behind gh and the node's GitHub client, on loopback, bounded in time.
// Two things differ from a terminal, both so that a failure fails: curl
// runs with --fail-with-body (an HTTP error is an exit status), and the
// default address 127.0.0.1:7717 is replaced by a free loopback port (so
// the test never meets a node a developer runs).
package docs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

var bin string

func TestMain(m *testing.M) { e2etest.Main(m, &bin) }

// block is one fenced shell example.
type block struct {
	file string
	line int
	mode string // "runnable", "node", or "not runnable"
	why  string
	text string
}

var marker = regexp.MustCompile(`^<!-- (runnable(?:: (node))?|not runnable: (.+)) -->$`)

// blocks reads the shell blocks of a markdown file; a block without a
// marker is an error (each example either runs or says why it cannot).
func blocks(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []block
	var prev string
	var cur *block
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case line == "```sh" || line == "```bash" || line == "```shell":
			cur = &block{file: filepath.Base(path), line: n}
			m := marker.FindStringSubmatch(strings.TrimSpace(prev))
			switch {
			case m == nil:
				t.Errorf("%s:%d: a shell example needs <!-- runnable -->, <!-- runnable: node --> or <!-- not runnable: why --> on the line before it", path, n)
			case m[3] != "":
				cur.mode, cur.why = "not runnable", m[3]
			case m[2] == "node":
				cur.mode = "node"
			default:
				cur.mode = "runnable"
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a fenced block is not closed", path)
	return out
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

func TestShellExamplesRun(t *testing.T) {
	ran := 0
	for _, path := range docFiles(t) {
		var script []string
		node := false
		for _, b := range blocks(t, path) {
			switch b.mode {
			case "runnable", "node":
				script = append(script, fmt.Sprintf("# %s:%d\n%s", b.file, b.line, b.text))
				node = node || b.mode == "node"
			}
		}
		if len(script) == 0 {
			continue
		}
		ran++
		t.Run(filepath.Base(path), func(t *testing.T) { runScript(t, strings.Join(script, "\n"), node) })
	}
	require.NotZero(t, ran, "some example runs")
}

// runScript runs one file's runnable examples on a fresh home.
func runScript(t *testing.T, script string, node bool) {
	home := t.TempDir()
	work := filepath.Join(home, "work")
	tools := filepath.Join(home, "tools")
	require.NoError(t, os.MkdirAll(work, 0o700))
	require.NoError(t, os.MkdirAll(tools, 0o700))
	require.NoError(t, os.Symlink(bin, filepath.Join(work, "sentinel")))
	require.NoError(t, os.Symlink(bin, filepath.Join(tools, "sentinel")))
	curl, err := exec.LookPath("curl")
	require.NoError(t, err, "the examples need curl")
	require.NoError(t, os.WriteFile(filepath.Join(tools, "curl"),
		[]byte("#!/bin/sh\nexec "+curl+" --fail-with-body --max-time 20 \"$@\"\n"), 0o700))

	gh := githubtest.New(t, githubtest.Options{Start: time.Now().Add(-time.Hour)})
	gh.OpenPR("OWNER/REPO", githubtest.PR{Number: 1})
	gh.OpenPR("acme/app", githubtest.PR{Number: 7})
	addr := fmt.Sprintf("127.0.0.1:%d", e2etest.FreePorts(t, 1)[0])
	env := e2etest.GHNodeEnv(gh,
		"HOME="+home, "AGENTPROTO_LISTEN="+addr,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	if node {
		n := e2etest.Launch(t, bin, filepath.Join(home, ".agentproto"), addr, env...)
		n.WaitReady(t, 30*time.Second)
	}
	script = strings.ReplaceAll(script, "127.0.0.1:7717", addr)

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir, cmd.Env = work, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The group goes at the end (a `serve &` of an example with it).
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: a process an example left in the background
	// must not hold the wait open.
	logf, err := os.Create(filepath.Join(home, "output"))
	require.NoError(t, err)
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	out, _ := os.ReadFile(logf.Name())
	require.NoError(t, err, "the examples failed (the script, then its output):\n%s\n---\n%s", script, out)
	t.Logf("output:\n%s", out)
}
