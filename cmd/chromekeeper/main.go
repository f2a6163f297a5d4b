// Command chromekeeper is an MCP server that gives an AI agent a real
// headless Chrome without session management. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/chromekeeper/chromekeeper/browser"
)

func main() {
	browser.RunGuardIfAsked()
	// A client that closes our stdout or stderr before we finish must not kill
	// us with SIGPIPE halfway through closing its browsers: take EPIPE instead.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	var exit exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &exit):
		if exit.err != nil {
			fmt.Fprintln(os.Stderr, "chromekeeper:", exit.err)
		}
		os.Exit(exit.code)
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "chromekeeper:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "chromekeeper:", err)
		os.Exit(1)
	}
}
