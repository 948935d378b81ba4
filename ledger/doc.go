// Package ledger is custody's provenance ledger: one leaf per transaction
// in a C2SP tlog-tiles transparency log, signed receipts, and the
// verification and audit of both from the log's public files alone.
//
// The log itself is github.com/transparency-dev/tessera with its POSIX
// driver under Config.Dir/log. Tessera acknowledges a leaf only after it
// has sequenced and integrated a whole batch (several fsyncs, ~5 ms here),
// which is too slow to put on every request's path, so Append goes through
// a journal (journal.go): the leaf is written to an append-only file with
// group-commit fdatasync and its index assigned there; Append returns once
// that fsync is done. A single feeder goroutine hands journaled leaves to
// tessera in index order, and Open re-feeds whatever the journal holds that
// the log does not (a crash between the two). docs/ledger.md has the
// formats and the figures.
//
// Files (leaf.go, salt.go, keys.go, receipt.go, journal.go, log.go,
// source.go, handler.go, verify.go, audit.go) each hold one concept.
package ledger
