// Command sentinel runs a sentinel node (`sentinel serve`) and is the
// client of a running node (every other verb).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentproto/sentinel/cmd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.StdIO())
	stop()
	os.Exit(code)
}
