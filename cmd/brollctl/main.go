// Command brollctl is the operator CLI: migrations, accounts, keys, credits,
// tiers, the clip catalog and dashboard users. Every command prints JSON on stdout and exits 0
// on success; on failure it prints one clear message on stderr and exits
// non-zero, having changed nothing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"broll/catalog/imports"
	"broll/internal/apperr"
	"broll/internal/redisx"
)

func main() {
	redisx.SilenceDriver()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli carries the streams and environment of one invocation.
type cli struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// errUsage marks mistakes in the command line itself (exit 2).
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, c.usage())
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	out, err := c.dispatch(ctx, args)
	if err != nil {
		return c.fail(err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) fail(err error) int {
	var ie *imports.Error
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(c.stderr, "brollctl: %s\n\n%s\n", strings.TrimPrefix(err.Error(), "usage: "), c.usage())
		return 2
	case errors.As(err, &ie):
		for _, l := range ie.Lines {
			fmt.Fprintln(c.stderr, l.String())
		}
		fmt.Fprintf(c.stderr, "brollctl: import rejected: %d invalid line(s), nothing was imported\n", len(ie.Lines))
		return 1
	}
	if ae, ok := apperr.As(err); ok {
		fmt.Fprintf(c.stderr, "brollctl: %s\n", ae.Message)
		return 1
	}
	fmt.Fprintf(c.stderr, "brollctl: %v\n", err)
	return 1
}

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}
