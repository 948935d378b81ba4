// Package ledger is custody's provenance ledger engine: one leaf per
// transaction in a C2SP tlog-tiles transparency log, and signed receipts.
// The formats of leaves and receipts, and the verification and audit of
// both from the log's public files, are package verify, which this
// package imports and which builds on every system; this one is
// unix-only (tessera's POSIX driver, flock, fdatasync).
//
// The log itself is github.com/transparency-dev/tessera with its POSIX
// driver under Config.Dir/log. Tessera acknowledges a leaf only after it
// has sequenced and integrated a whole batch (several fsyncs, ~5 ms here),
// which is too slow to put on every request's path, so Append goes through
// a journal (journal.go): the leaf is written to an append-only file with
// group-commit fdatasync and its index assigned there; Append returns once
// that fsync is done (fsync_linux.go: through Linux AIO, waited for in the
// network poller, when GOMAXPROCS=1, so that the fsync never holds the only
// P). A single feeder goroutine hands journaled leaves to
// tessera in index order, and Open re-feeds whatever the journal holds that
// the log does not (a crash between the two). When tessera fails to
// integrate, the feeder replaces its appender and re-adds the pending
// leaves in process (logrecovery.go). Before tessera opens the log, Open
// checks the stored tree against the last signed checkpoint and the
// journal (startcheck.go) and refuses with ErrTampered when they differ,
// since tessera would sign whatever tree it found. docs/ledger.md has the
// formats and the figures.
//
// With witnesses (witness.go), tessera publishes a checkpoint only once
// their quorum has cosigned it; appends never wait for them. Config leaves
// (configleaf.go) record the rules in force, and every transaction leaf
// names the one it was decided under.
//
// Files (salt.go, keys.go, journal.go, fsync_*.go, logrecovery.go, handler.go,
// witness.go, configleaf.go, startcheck.go) each hold one concept; the Log itself is
// log.go (lifecycle: Open, Ready, Close), feed.go (the journal→tessera
// feeder and resolver), append.go (Append and receipts) and read.go
// (Receipt, Entries, leaf reads).
package ledger
