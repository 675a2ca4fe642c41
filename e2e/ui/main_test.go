// Package ui_test drives the web dashboard of the built sentinel binary
// in a real headless Chromium (chromedp): sign-in, live updates over SSE,
// replay, sign-out and the refusal of cross-site writes. Without chromium
// on PATH the browser test skips, except with CI=true, where it fails.
package ui_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

var (
	binary string
	// chromium is the browser's path ("" when none is installed).
	chromium string
)

// browsers are the names the browser goes by (Debian's package first).
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

func TestMain(m *testing.M) {
	for _, name := range browsers {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	e2etest.Main(m, &binary)
}

// needBrowser skips the test without a browser, or fails it with CI=true.
func needBrowser(t *testing.T) {
	t.Helper()
	if chromium != "" {
		return
	}
	const why = "no chromium on PATH (apt-get install chromium): the dashboard's browser tests need it"
	if os.Getenv("CI") == "true" {
		t.Fatal(why + "; CI=true, so they must run")
	}
	t.Skip(why)
}
