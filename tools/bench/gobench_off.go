//go:build !gobench

package bench

import (
	"context"
	"strings"
)

// runQuietPollBench does not run the Go benchmark: a binary built without
// the gobench tag never runs the go tool. It says how to get the figure.
func runQuietPollBench(_ context.Context, benchtime string) GoBenchResult {
	cmd := "go test -run '^$' -bench '^" + strings.ReplaceAll(QuietPollBench, "/", "$/^") + "$' -benchtime " + benchtime + " -count 1 ./providers/localgh/"
	return GoBenchResult{Name: QuietPollBench, Command: cmd,
		Skipped: "this binary does not run the go tool; from the source tree run go run -tags gobench ./cmd/sentinel bench, or " + cmd}
}
