// Command brollctl is the operator CLI: migrations, accounts, keys, credits,
// tiers, the clip catalog and dashboard users. Every command prints JSON on stdout and exits 0
// on success; on failure it prints one clear message on stderr and exits
// non-zero, having changed nothing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/internal/apperr"
)

func main() {
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

const usage = `usage: brollctl COMMAND [ARGS]

  migrate
  account create --name NAME --source SOURCE [--credits USD]
  account set --account ID --low-balance USD|default
  key create-root --account ID [--label L]
  key create-ops [--label L]
  key revoke --id ID
  key limit --id ID [--spend USD [--period day|month|total] | --no-spend-limit] [--rate N | --default-rate]
  credits add --account ID --amount USD
  credits reset-test --account ID
  tiers list
  tiers set NAME PRICE
  clips import FILE|-
  clips status
  clips reembed [--all|--failed]
  seed-demo [--count N]
  audit downloads [--since 30d] [--threshold N]
  billing statement --account ID --month YYYY-MM
  legacy enable --source SOURCE
  legacy disable --source SOURCE
  legacy migrate-customers --account ID
  user create --account ID --email E
  user reset --email E
  user list --account ID

Environment: DATABASE_URL, REDIS_URL, BROLL_PUBLIC_URL (see docs/operations.md).`

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, usage)
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
	var ie *catalog.ImportError
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintf(c.stderr, "brollctl: %s\n\n%s\n", strings.TrimPrefix(err.Error(), "usage: "), usage)
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

func (c *cli) dispatch(ctx context.Context, args []string) (any, error) {
	cmd, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub = rest[0]
	}
	switch cmd {
	case "migrate":
		return c.migrate(ctx, rest)
	case "account":
		switch sub {
		case "create":
			return c.accountCreate(ctx, rest[1:])
		case "set":
			return c.accountSet(ctx, rest[1:])
		}
	case "key":
		switch sub {
		case "create-root":
			return c.keyCreateRoot(ctx, rest[1:])
		case "create-ops":
			return c.keyCreateOps(ctx, rest[1:])
		case "revoke":
			return c.keyRevoke(ctx, rest[1:])
		case "limit":
			return c.keyLimit(ctx, rest[1:])
		}
	case "credits":
		switch sub {
		case "add":
			return c.creditsAdd(ctx, rest[1:])
		case "reset-test":
			return c.creditsResetTest(ctx, rest[1:])
		}
	case "tiers":
		switch sub {
		case "list":
			return c.tiersList(ctx, rest[1:])
		case "set":
			return c.tiersSet(ctx, rest[1:])
		}
	case "clips":
		switch sub {
		case "import":
			return c.clipsImport(ctx, rest[1:])
		case "status":
			return c.clipsStatus(ctx, rest[1:])
		case "reembed":
			return c.clipsReembed(ctx, rest[1:])
		}
	case "seed-demo":
		return c.seedDemo(ctx, rest)
	case "media":
		if sub == "migrate" {
			return c.mediaMigrate(ctx, rest[1:])
		}
	case "audit":
		if sub == "downloads" {
			return c.auditDownloads(ctx, rest[1:])
		}
	case "billing":
		if sub == "statement" {
			return c.billingStatement(ctx, rest[1:])
		}
	case "legacy":
		switch sub {
		case "enable", "disable":
			return c.legacySetEnabled(ctx, rest[1:], sub == "enable")
		case "migrate-customers":
			return c.legacyMigrateCustomers(ctx, rest[1:])
		}
	case "user":
		switch sub {
		case "create":
			return c.userCreate(ctx, rest[1:])
		case "reset":
			return c.userReset(ctx, rest[1:])
		case "list":
			return c.userList(ctx, rest[1:])
		}
	default:
		return nil, usageErr("unknown command %q", cmd)
	}
	if sub == "" {
		return nil, usageErr("%s needs a subcommand", cmd)
	}
	return nil, usageErr("unknown command %q", cmd+" "+sub)
}

// idFlags parses the flags of a subcommand about one record, named by its
// UUID in the flag idFlag ("account", "id"), which is required, and
// returns the id parsed. define adds the subcommand's other flags.
func (c *cli) idFlags(name string, args []string, idFlag string, define func(*flag.FlagSet)) (uuid.UUID, error) {
	var v string
	if _, err := c.flags(name, args, 0, func(fs *flag.FlagSet) {
		fs.StringVar(&v, idFlag, "", "the "+idFlag+" (a UUID)")
		define(fs)
	}); err != nil {
		return uuid.Nil, err
	}
	return parseID(idFlag, v)
}

// flags parses a subcommand's flags, refusing stray positional arguments
// unless positional > 0.
func (c *cli) flags(name string, args []string, positional int, define func(*flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	if err := fs.Parse(args); err != nil {
		return nil, usageErr("%s: %v", name, err)
	}
	if fs.NArg() != positional {
		if positional == 0 {
			return nil, usageErr("%s: unexpected argument %q", name, fs.Arg(0))
		}
		return nil, usageErr("%s: expected %d argument(s), got %d", name, positional, fs.NArg())
	}
	return fs.Args(), nil
}
