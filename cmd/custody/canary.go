package main

import (
	"context"
	"fmt"
	"io"
)

// runCanary runs every canary probe once. (Wired to the canary package.)
func runCanary(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "custody canary: not wired yet")
	return 2
}
