//go:build unix

package verify_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/verify"
)

// Audit a whole log from its public files (a directory here; OpenSource
// takes a URL as well): the checkpoint's signature, every entry hashed
// into the signed root, and, with a state file, consistency with what the
// last audit saw. The log is one the ledger engine writes, of three
// transactions and then two more.
func ExampleAudit() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "custody-audit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	appendTo := func(n int) string {
		l, err := ledgertest.Open(ctx, dir)
		if err != nil {
			log.Fatal(err)
		}
		defer l.Close(ctx)
		s, err := ledgertest.Append(ctx, l, n)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := ledgertest.Integrated(ctx, l, s[n-1].Receipt.Index, s[n-1].Receipt.RequestID); err != nil {
			log.Fatal(err)
		}
		return l.VerifierKey()
	}

	// The key is pinned out of band (GET /log/verifier once, kept).
	key, err := verify.ParseVerifier(appendTo(3))
	if err != nil {
		log.Fatal(err)
	}
	src, err := verify.OpenSource(filepath.Join(dir, "log"))
	if err != nil {
		log.Fatal(err)
	}
	state := filepath.Join(dir, "audit-state.json")
	rep, err := verify.Audit(ctx, src, key, state)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("clean: log %s, %d leaves\n", rep.Origin, rep.Size)

	appendTo(2)
	rep, err = verify.Audit(ctx, src, key, state)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("clean: %d leaves, consistent with the %d of the last audit\n", rep.Size, rep.PreviousSize)
	// Output:
	// clean: log test.custody/log, 3 leaves
	// clean: 5 leaves, consistent with the 3 of the last audit
}
