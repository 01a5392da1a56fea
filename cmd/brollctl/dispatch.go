package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"broll/internal/apperr"
)

// command is one line of the usage text and what runs it.
type command struct {
	words string // what selects it: "migrate", "key limit"
	usage string // its arguments as the usage text shows them
	nargs int    // the positional arguments it takes
	// define declares the command's flags and returns its action, which sees
	// them parsed and past their checks.
	define func(f *flags) action
}

// action is a command's work once its flags parse: its own checks, then its
// call on the environment.
type action func(ctx context.Context) (any, error)

// commands is every command, in the order the usage text lists them.
func (c *cli) commands() []command {
	return []command{
		{"migrate", "", 0, c.migrate},
		{"account create", "--name NAME --source SOURCE [--credits USD]", 0, c.accountCreate},
		{"account set", "--account ID --low-balance USD|default", 0, c.accountSet},
		{"key create-root", "--account ID [--label L]", 0, c.keyCreateRoot},
		{"key create-ops", "[--label L]", 0, c.keyCreateOps},
		{"key revoke", "--id ID", 0, c.keyRevoke},
		{"key limit", "--id ID [--spend USD [--period day|month|total] | --no-spend-limit] " +
			"[--rate N | --default-rate]", 0, c.keyLimit},
		{"license show", "--id LICENSE_ID", 0, c.licenseShow},
		{"license revoke", "--id LICENSE_ID --reason TEXT", 0, c.licenseRevoke},
		{"license prune-stamped", "[--older-than 90d]", 0, c.licensePruneStamped},
		{"collections export", "--key ID", 0, c.collectionsExport},
		{"credits add", "--account ID --amount USD", 0, c.creditsAdd},
		{"credits reset-test", "--account ID", 0, c.creditsResetTest},
		{"tiers list", "", 0, c.tiersList},
		{"tiers set", "NAME PRICE", 2, c.tiersSet},
		{"clips import", "FILE|-", 1, c.clipsImport},
		{"clips status", "", 0, c.clipsStatus},
		{"clips reembed", "[--all|--failed]", 0, c.clipsReembed},
		{"clips reprobe", "[--id ID | --since TIME] [--wait [--timeout 1h]] | --run RUN_ID", 0, c.clipsReprobe},
		{"search calibrate", "[--target R] [--queries N]", 0, c.searchCalibrate},
		{"search calibrations", "", 0, c.searchCalibrations},
		{"seed-demo", "[--count N]", 0, c.seedDemo},
		{"media migrate", "--to s3", 0, c.mediaMigrate},
		{"audit downloads", "[--since 30d] [--threshold N]", 0, c.auditDownloads},
		{"billing statement", "--account ID --month YYYY-MM", 0, c.billingStatement},
		{"legacy enable", "--source SOURCE", 0, c.legacySetEnabled(true)},
		{"legacy disable", "--source SOURCE", 0, c.legacySetEnabled(false)},
		{"legacy migrate-customers", "--account ID", 0, c.legacyMigrateCustomers},
		{"user create", "--account ID --email E", 0, c.userCreate},
		{"user reset", "--email E", 0, c.userReset},
		{"user list", "--account ID", 0, c.userList},
	}
}

// usage is the help text: the table, a line a command.
func (c *cli) usage() string {
	var b strings.Builder
	b.WriteString("usage: brollctl COMMAND [ARGS]\n\n")
	for _, cmd := range c.commands() {
		fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(cmd.words+" "+cmd.usage))
	}
	b.WriteString("\nEnvironment: DATABASE_URL, REDIS_URL, BROLL_PUBLIC_URL (see docs/operations.md).")
	return b.String()
}

// dispatch runs the command args name: its flags parse, then their checks,
// then the command's own action.
func (c *cli) dispatch(ctx context.Context, args []string) (any, error) {
	cmd, rest, err := c.find(args)
	if err != nil {
		return nil, err
	}
	f := &flags{FlagSet: flag.NewFlagSet(cmd.words, flag.ContinueOnError)}
	f.SetOutput(io.Discard)
	act := cmd.define(f)
	if err := f.Parse(rest); err != nil {
		return nil, usageErr("%s: %v", cmd.words, err)
	}
	if f.NArg() != cmd.nargs {
		if cmd.nargs == 0 {
			return nil, usageErr("%s: unexpected argument %q", cmd.words, f.Arg(0))
		}
		return nil, usageErr("%s: expected %d argument(s), got %d", cmd.words, cmd.nargs, f.NArg())
	}
	for _, check := range f.checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return act(ctx)
}

// find picks the command named by the first word of args, or the first two
// for a group ("key limit"), and returns it with the arguments left.
func (c *cli) find(args []string) (command, []string, error) {
	name, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub = rest[0]
	}
	group := false
	for _, cmd := range c.commands() {
		first, second, _ := strings.Cut(cmd.words, " ")
		switch {
		case first != name:
		case second == "":
			return cmd, rest, nil
		case second == sub:
			return cmd, rest[1:], nil
		default:
			group = true
		}
	}
	switch {
	case !group:
		return command{}, nil, usageErr("unknown command %q", name)
	case sub == "":
		return command{}, nil, usageErr("%s needs a subcommand", name)
	}
	return command{}, nil, usageErr("unknown command %q", name+" "+sub)
}

// flags is a command's flag set and the checks its values pass before the
// command runs, in the order declared.
type flags struct {
	*flag.FlagSet
	checks []func() error
}

// id declares the required flag name ("account", "id") naming a record by
// its UUID.
func (f *flags) id(name string) *uuid.UUID {
	v := f.required(name, "the "+name+" (a UUID)", "--"+name+" is required")
	id := new(uuid.UUID)
	f.checks = append(f.checks, func() (err error) {
		if *id, err = uuid.Parse(*v); err != nil {
			return apperr.InvalidField(name, "--%s %q is not a UUID", name, *v)
		}
		return nil
	})
	return id
}

// required declares a string flag the command cannot do without: missing
// is its usage error.
func (f *flags) required(name, usage, missing string) *string {
	v := f.String(name, "", usage)
	f.checks = append(f.checks, func() error {
		if *v == "" {
			return usageErr("%s", missing)
		}
		return nil
	})
	return v
}
