// Command sentinel runs a sentinel node (`sentinel serve`) and is the
// client of a running node (every other verb).
//
// The binary carries Mozilla's CA roots (x509roots/fallback): they are
// used only when the system has none, so the FROM scratch image reaches
// GitHub over HTTPS while a host's own roots (and SSL_CERT_FILE) still win.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/agentproto/sentinel/cmd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.StdIO())
	stop()
	os.Exit(code)
}
