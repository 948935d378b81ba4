package main

import (
	"context"
	"io"

	"github.com/custody-gateway/custody/ledger/ledgercli"
)

// runAudit is `custody audit`: see ledger/ledgercli.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return ledgercli.Audit(ctx, args, stdout, stderr)
}
