// Command custody is the inference-integrity gateway: `custody serve`
// runs it; `sim`, `verify`, `audit`, `canary` and `version` are its tools.
// main only calls run, which returns the exit code.
package main

import (
	"context"
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

const usage = `custody — an inference-integrity gateway for LLM APIs

Usage:
  custody serve   [--config FILE]            run the gateway (no config: 127.0.0.1:8080, built-in simulator)
  custody sim     [--listen ADDR] [--model NAME] [--fault NAME]...   run the reference upstream simulator
  custody verify  [--log URL|DIR] [--request FILE] [--response FILE] RECEIPT
  custody audit   --log URL|DIR [--state FILE]
  custody canary  [--config FILE] [--route NAME]
  custody version
`

// run dispatches a subcommand. Exit codes: 0 success, 1 failure (invalid,
// tampered, failed), 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, stdout, stderr)
	case "sim":
		return runSim(ctx, rest, stdout, stderr)
	case "verify":
		return runVerify(ctx, rest, stdout, stderr)
	case "audit":
		return runAudit(ctx, rest, stdout, stderr)
	case "canary":
		return runCanary(ctx, rest, stdout, stderr)
	case "version", "--version", "-v":
		return runVersion(stdout)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "custody: unknown command %q\n\n%s", cmd, usage)
	return 2
}
