//go:build !unix

package main

import (
	"context"
	"fmt"
	"io"
)

// The gateway's ledger writes its log with tessera's POSIX driver (flock,
// fdatasync, O_DIRECTORY), so serve, and canary which runs the same
// pipeline, exist only on unix systems. verify and audit read the log's
// public files with package verify and work everywhere.

func runServe(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "custody serve runs on unix systems")
	return exitFailed
}

func runCanary(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "custody canary runs on unix systems")
	return exitFailed
}
