//go:build !unix

package main

// The gateway's ledger writes its log with tessera's POSIX driver (flock,
// fdatasync, O_DIRECTORY), so serve, and canary which runs the same
// pipeline, exist only on unix systems. verify and audit read the log's
// public files with package verify and work everywhere.
var (
	runServe  = unixOnly("serve")
	runCanary = unixOnly("canary")
	runEval   = unixOnly("eval")
	runDoctor = unixOnly("doctor")
)
