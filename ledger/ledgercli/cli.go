// Package ledgercli is the command-line side of the ledger: the bodies of
// `custody verify` and `custody audit`, kept out of package main so that
// they are tested like any other code. Exit codes: 0 valid/clean, 1
// invalid/tampered (reason on stderr), 2 usage error.
package ledgercli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/custody-gateway/custody/verify"
	"golang.org/x/mod/sumdb/note"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitInvalid = 1
	ExitUsage   = 2
)

// parseInterspersed parses flags wherever they appear among the
// positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// verifierFor returns the pinned key, or else the key the log publishes,
// with a warning: a key fetched from the log proves only that the log is
// self-consistent.
func verifierFor(ctx context.Context, key string, src verify.LogSource, stderr io.Writer) (note.Verifier, error) {
	if key != "" {
		return verify.ParseVerifier(key)
	}
	if src == nil {
		return nil, errors.New("no key: pass --key (the log's verifier key, pinned out of band) or --log")
	}
	k, err := src.ReadVerifierKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("no --key, and the log publishes none: %w", err)
	}
	fmt.Fprintf(stderr, "warning: no --key given; trusting the key the log publishes (%s). Pin it with --key.\n", k)
	return verify.ParseVerifier(k)
}

// Verify is `custody verify [--log URL|DIR] [--request FILE] [--response FILE] [--key K] RECEIPT`.
func Verify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logLoc := fs.String("log", "", "the log: a directory or an http(s) URL of its /log/ root")
	reqFile := fs.String("request", "", "the exact request body bytes to open the request commitment")
	respFile := fs.String("response", "", "the exact response body bytes to open the response commitment")
	key := fs.String("key", "", "the log's verifier key, or a file holding it (pin it out of band)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: custody verify [--log URL|DIR] [--request FILE] [--response FILE] [--key K] RECEIPT")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		fs.Usage()
		return ExitUsage
	}
	raw, err := readArg(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "custody verify: %v\n", err)
		return ExitUsage
	}
	var request, response []byte
	if *reqFile != "" {
		if request, err = os.ReadFile(*reqFile); err != nil {
			fmt.Fprintf(stderr, "custody verify: %v\n", err)
			return ExitUsage
		}
	}
	if *respFile != "" {
		if response, err = os.ReadFile(*respFile); err != nil {
			fmt.Fprintf(stderr, "custody verify: %v\n", err)
			return ExitUsage
		}
	}
	var src verify.LogSource
	if *logLoc != "" {
		if src, err = verify.OpenSource(*logLoc); err != nil {
			fmt.Fprintf(stderr, "custody verify: %v\n", err)
			return ExitUsage
		}
	}
	v, err := verifierFor(ctx, *key, src, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "custody verify: %v\n", err)
		if *key != "" || src == nil {
			return ExitUsage
		}
		return ExitInvalid
	}
	r, err := verify.ParseReceipt(raw)
	if err != nil {
		fmt.Fprintf(stderr, "custody verify: invalid: %v\n", err)
		return ExitInvalid
	}
	if err := verify.VerifyReceipt(ctx, src, v, r, request, response); err != nil {
		fmt.Fprintf(stderr, "custody verify: %v\n", err)
		return ExitInvalid
	}
	var what []string
	what = append(what, "signature")
	if request != nil {
		what = append(what, "request")
	}
	if response != nil {
		what = append(what, "response")
	}
	switch {
	case src != nil:
		what = append(what, "inclusion in the log")
	case r.Checkpoint != "":
		what = append(what, "inclusion under the receipt's checkpoint")
	default:
		fmt.Fprintln(stderr, "note: the receipt has no inclusion proof yet and no --log was given: only the signature (the promise) was checked")
	}
	fmt.Fprintf(stdout, "valid: request %s, index %d, log %s (%s)\n", r.RequestID, r.Index, r.Origin, strings.Join(what, ", "))
	return ExitOK
}

// Audit is `custody audit --log URL|DIR [--state FILE] [--key K]`.
func Audit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logLoc := fs.String("log", "", "the log: a directory or an http(s) URL of its /log/ root (required)")
	state := fs.String("state", "", "file remembering the last clean checkpoint; created if absent, updated when clean")
	key := fs.String("key", "", "the log's verifier key, or a file holding it (pin it out of band)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: custody audit --log URL|DIR [--state FILE] [--key K]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 0 || *logLoc == "" {
		fs.Usage()
		return ExitUsage
	}
	src, err := verify.OpenSource(*logLoc)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		return ExitUsage
	}
	v, err := verifierFor(ctx, *key, src, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		if *key != "" {
			return ExitUsage
		}
		return ExitInvalid
	}
	rep, err := verify.Audit(ctx, src, v, *state)
	if err != nil {
		fmt.Fprintf(stderr, "custody audit: %v\n", err)
		return ExitInvalid
	}
	fmt.Fprintf(stdout, "clean: log %s, %d leaves, root %x", rep.Origin, rep.Size, rep.Root)
	if rep.PreviousSize > 0 {
		fmt.Fprintf(stdout, ", consistent with the %d leaves of the last audit", rep.PreviousSize)
	}
	fmt.Fprintf(stdout, " (%s)\n", rep.Duration.Round(1e6))
	return ExitOK
}

// readArg reads a file, or stdin for "-".
func readArg(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	}
	return os.ReadFile(name)
}
