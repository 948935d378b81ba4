package main

import (
	"context"
	"io"

	"github.com/custody-gateway/custody/ledger/ledgercli"
)

// runVerify is `custody verify`: see ledger/ledgercli.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return ledgercli.Verify(ctx, args, stdout, stderr)
}
