// Command custody is the inference-integrity gateway: `custody serve`
// runs it; `sim`, `verify`, `audit`, `canary`, `eval`, `doctor`, `ledger` and
// `version` are its tools.
// main only calls run, which returns the exit code. Each subcommand is one
// file (serve.go, sim.go, verify.go, audit.go, canary.go, eval.go, doctor.go, ledger.go,
// version.go) with
// its own flag.FlagSet; `custody COMMAND --help` says what it does, lists
// its flags and its exit codes (withSynopsis), and exits 0.
//
// serve and canary run the whole gateway, whose ledger is unix-only, and
// ledger reads its journal (serve_other.go and ledger_other.go say so
// elsewhere); verify and audit read only the log's
// public files (package verify) and work on every system.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
)

func main() {
	// tessera logs its lifecycle through klog; custody's own structured
	// log says what an operator needs.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usage lists every command with every flag it takes; TestUsageListsEveryFlag
// holds it to each command's FlagSet.
const usage = `custody — an inference-integrity gateway for LLM APIs

Usage:
  custody serve   [--config FILE] [--listen ADDR]
        run the gateway (no config: 127.0.0.1:8080, built-in simulator)
  custody sim     [--listen ADDR] [--model NAME]... [--fault NAME]... [--allow-fault-header]
                  [--ownership-tags] [--capacity TOKENS] [--variant N] [--token-delay DURATION]
                  [--prefill-delay DURATION]
        run the reference upstream simulator
  custody verify  [--log URL|DIR] [--request FILE] [--response FILE] [--key VKEY] [--wait DURATION]
                  [--witness-key VKEY]... [--witness-quorum N] [--export FILE] RECEIPT
  custody verify  --offline --key VKEY [--witness-key VKEY]... [--witness-quorum N] BUNDLE
        verify one receipt: exit 0 valid, 1 invalid, 2 usage error, 3 not yet integrated
  custody audit   --log URL|DIR [--state FILE] [--key VKEY] [--witness-key VKEY]... [--witness-quorum N]
  custody audit   --config FILE [--state-dir DIR]
        verify a whole log (or every shard the config's index lists): exit 0 clean, 1 tampered
  custody canary  [--config FILE] [--route MODEL/PROVIDER]
        run every canary probe once: exit 1 if any fails
  custody eval    [--config FILE] [--suite NAME] [--route MODEL/PROVIDER] [--pin]
        run the evaluation suites once through the pipeline: exit 1 if one is under its threshold
  custody doctor  [--config FILE] [--json]
        check the config against the live upstreams: exit 1 on a problem, with what to change
  custody ledger  check|repair [--data DIR]
        check a stopped gateway's journal (exit 1 corrupt), or cut it at the damage
  custody version
        version, commit, Go version
  custody help [COMMAND]

'custody COMMAND --help' (or 'custody help COMMAND') says what a command does, its flags and its
exit codes. Exit code 2 is a usage error.
`

// command runs one subcommand with its arguments.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// commands are the subcommands, by name.
var commands = map[string]command{
	"serve":  runServe,
	"sim":    runSim,
	"verify": runVerify,
	"audit":  runAudit,
	"canary": runCanary,
	"eval":   runEval,
	"doctor": runDoctor,
	"ledger": runLedger,
	"version": func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		return runVersion(args, stdout, stderr)
	},
}

// run dispatches a subcommand. Exit codes: 0 success, 1 failure (invalid,
// tampered, failed), 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-v":
		name = "version"
	case "help", "--help", "-help", "-h":
		if len(rest) == 0 {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		if len(rest) > 1 || commands[rest[0]] == nil {
			fmt.Fprintf(stderr, "custody help: no command %q\n\n%s", rest, usage)
			return exitUsage
		}
		name, rest = rest[0], []string{"--help"}
	}
	if cmd := commands[name]; cmd != nil {
		return cmd(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "custody: unknown command %q\n\n%s", name, usage)
	return exitUsage
}

// unixOnly stands in for a command that does not exist on this system
// (serve_other.go): it says so and exits 1, or 0 for --help, which must
// succeed for every command.
func unixOnly(name string) command {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		fs := newFlags(name, stderr)
		fs.SetOutput(io.Discard) // this system knows none of its flags
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "custody %s runs on unix systems; 'custody help' lists its flags\n", name)
			return exitOK
		}
		fmt.Fprintf(stderr, "custody %s runs on unix systems\n", name)
		return exitFailed
	}
}
