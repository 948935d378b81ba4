//go:build unix

package verify_test

import (
	"context"
	"testing"

	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/verify"
)

// The tests in package verify_test check the verifier against logs the
// ledger engine writes, so they run where the engine does (unix); the
// package-internal tests run everywhere.

// openTest opens a ledger in a temporary directory, closed at the end of
// the test.
func openTest(t testing.TB, dir string) *ledger.Log {
	t.Helper()
	l, err := ledgertest.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// appendN appends n transactions and returns their receipts, requests and
// responses.
func appendN(t testing.TB, l *ledger.Log, n int) (rs []*verify.Receipt, reqs, resps [][]byte) {
	t.Helper()
	samples, err := ledgertest.Append(context.Background(), l, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		rs, reqs, resps = append(rs, s.Receipt), append(reqs, s.Request), append(resps, s.Response)
	}
	return rs, reqs, resps
}

// integrated waits until a published checkpoint covers index and returns
// the receipt with its proof.
func integrated(t testing.TB, l *ledger.Log, index uint64, id string) *verify.Receipt {
	t.Helper()
	r, err := ledgertest.Integrated(context.Background(), l, index, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyKeys gives the ledger directory to the keys of the one in from.
func copyKeys(t testing.TB, from, to string) {
	t.Helper()
	if err := ledgertest.CopyKeys(from, to); err != nil {
		t.Fatal(err)
	}
}
