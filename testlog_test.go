package sentinel_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// .ci/testlog.go turns `go test -json` into CI's log: a failing package
// leaves its whole output there (passing tests' lines and build errors
// included), so does a package the run never finished, and the exit code
// says whether anything did.
func TestCITestLog(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the go tool")
	}
	for _, tc := range []struct {
		input    string
		code     int
		contains []string
		absent   []string
	}{
		{"fail.json", 1, []string{
			"FAIL\texample/a\t0.070s\n", "ok  \texample/b\t0.2s\n",
			"==== FAILED example/a: its whole output follows ====\n", "node log of a passing test", "a_test.go:4: boom",
			"==== FAILED example/c: its whole output follows ====\n", "undefined: undefined",
			"2 package(s) failed or did not finish: example/a example/c",
		}, []string{"quiet when it passes"}},
		{"pass.json", 0, []string{"ok  \texample/b\t0.2s\n", "[no test files]"}, []string{"====", "quiet when it passes"}},
		{"killed.json", 1, []string{"==== DID NOT FINISH example/slow", "waiting for the cluster"}, nil},
	} {
		t.Run(tc.input, func(t *testing.T) {
			in, err := os.Open("testdata/testlog/" + tc.input)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd := exec.Command("go", "run", ".ci/testlog.go")
			cmd.Stdin = in
			out, err := cmd.Output()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			for _, want := range tc.contains {
				if !strings.Contains(string(out), want) {
					t.Errorf("the log lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tc.absent {
				if strings.Contains(string(out), not) {
					t.Errorf("the log has %q:\n%s", not, out)
				}
			}
		})
	}
}
