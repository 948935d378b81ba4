// Package verify holds receipts, leaves, proofs and audits from the log's
// public files; it builds on every GOOS and is importable by clients.
//
// It is the public half of custody's ledger: the leaf and receipt
// formats (leaf.go, receipt.go), the commitments that let a client prove
// which bytes it sent and received (commit.go), pinned verifier keys
// (key.go), the log's public files as a directory or a URL (source.go),
// the verification of one receipt (verify.go), offline bundles in the
// C2SP tlog-proof shape (bundle.go), witness cosignature policies
// (witness.go), config leaves (configleaf.go) and the audit of a whole
// log (audit.go). Subpackage capture is an http.RoundTripper that hands
// an application the exact bytes it exchanged; clients/js is the npm
// twin of the offline verification, and testdata/receipts at the
// repository's root the test vectors both must agree on. The engine that writes the log, package ledger, imports
// this package for the formats; nothing here imports the engine, tessera's
// storage drivers or anything POSIX-only, so that an auditor on any
// system can run `custody verify` and `custody audit`.
//
// docs/ledger.md documents the formats.
package verify
