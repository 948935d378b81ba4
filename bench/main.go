// Command bench holds custody against the targets of SPEC §10.
//
// Run from the repository root:
//
//	go run ./bench              # the full run (several minutes)
//	go run ./bench -short       # a smoke run at tiny sizes (under a minute)
//	go run ./bench -write-doc   # also rewrite the results in docs/BENCHMARKS.md
//	go run ./bench -profile /tmp/custody-E.pprof   # and profile mode E at saturation
//
// The simulator (zero model time), the load generator and the proxy
// under test are separate processes: bench re-executes itself in a role
// (see child.go), so that each proxy's CPU time and peak RSS can be read
// from /proc/<pid>. Five modes are measured in interleaved rounds (A B C
// D E, A B C D E, ...) so that the machine's noise falls on all alike:
//
//	A direct      the load generator calls the simulator
//	B bare        a bare httputil.ReverseProxy in front of it
//	C nochecks    custody with every check off and a no-op Recorder
//	D checks      custody with every check on and a no-op Recorder
//	E durable     custody with every check, the durable ledger and the
//	              sqlite index, assembled as `custody serve` does
//
// Every target is a ratio to the bare proxy measured in the same run.
// Beside them: token counting against npm's tiktoken, the ledger's
// durable append rate and the audit of a million leaves.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if role := os.Getenv(roleEnv); role != "" {
		err = runChild(ctx, role)
	} else {
		err = run(ctx, os.Args[1:], os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}
