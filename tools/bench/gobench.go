//go:build gobench

// The production binary never runs the go tool: this file is built only
// with the gobench tag (go run -tags gobench ./cmd/sentinel bench, from the
// source tree). gobench_off.go stands in for it otherwise.

package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// runQuietPollBench runs BenchmarkQuietPoll/localgh-inprocess in the
// module's source tree when the go tool and gh are on PATH and a source
// tree is found from the working directory upwards.
func runQuietPollBench(ctx context.Context, benchtime string) GoBenchResult {
	args := []string{"test", "-run", "^$", "-bench", "^" + strings.ReplaceAll(QuietPollBench, "/", "$/^") + "$", "-benchtime", benchtime, "-count", "1", "./providers/localgh/"}
	res := GoBenchResult{Name: QuietPollBench, Command: "go " + strings.Join(quoteArgs(args), " ")}
	root, err := moduleRoot()
	if err != nil {
		res.Skipped = err.Error()
		return res
	}
	for _, tool := range []string{"go", "gh"} {
		if _, err := exec.LookPath(tool); err != nil {
			res.Skipped = tool + " is not on PATH"
			return res
		}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		res.Skipped = fmt.Sprintf("go test failed: %v: %s", err, tail(out.String()+stderr.String(), 600))
		return res
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkQuietPoll/localgh-inprocess") {
			continue
		}
		res.N, _ = strconv.ParseInt(f[1], 10, 64)
		res.Metrics = map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				res.Metrics[f[i+1]] = v
			}
		}
	}
	if res.Metrics == nil {
		res.Skipped = "no benchmark line in the go test output: " + tail(out.String(), 600)
	}
	return res
}

// moduleRoot finds the directory of the sentinel module's go.mod from the
// working directory upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			line, _, _ := strings.Cut(string(raw), "\n")
			if strings.TrimSpace(strings.TrimPrefix(line, "module")) == Module {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not run inside the sentinel source tree (needed for the Go benchmark)")
		}
		dir = parent
	}
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$ /") && !strings.HasPrefix(a, "./") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
