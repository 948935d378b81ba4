//go:build !unix

package main

import (
	"context"
	"fmt"
	"io"
)

// runLedger reads the ledger's journal with the engine (package ledger),
// which is unix-only like serve.
func runLedger(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "custody ledger runs on unix systems")
	return exitFailed
}
