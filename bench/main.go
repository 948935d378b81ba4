// Command bench holds custody against the latency and throughput targets of docs/BENCHMARKS.md.
//
// Run from the repository root:
//
//	go run ./bench              # the full run (several minutes)
//	go run ./bench -short       # a smoke run at tiny sizes (under a minute)
//	go run ./bench -write-doc   # also rewrite the results in docs/BENCHMARKS.md
//	go run ./bench -profile /tmp/custody.pprof   # and profile mode F at saturation, per layout
//	go run ./bench -modes A,B,F -skip tokens,ledger,audit   # the gateway against the floor, quickly
//
// The simulator (zero model time), the load generator and the proxy
// under test are separate processes: bench re-executes itself in a role
// (see child.go), or runs the custody binary itself (mode F), so that
// each proxy's CPU time and peak RSS can be read from /proc/<pid>. The
// modes are measured in interleaved rounds (A B C D E F, F E D C B A, ...)
// so that the machine's noise falls on all alike:
//
//	A direct      the load generator calls the simulator
//	B bare        a bare httputil.ReverseProxy in front of it
//	C nochecks    custody with every check off and a no-op Recorder
//	D checks      custody with every check on and a no-op Recorder
//	E durable     custody with every check, the durable ledger and the
//	              sqlite index, assembled as `custody serve` does
//	F serve       `custody serve` itself (built with go build), its
//	              defaults plus debug.pprof: every check, contamination,
//	              the durable ledger, the sqlite index, metrics, the log line
//
// in two layouts (-layouts): one-core pins each proxy to the last CPU
// with taskset and GOMAXPROCS=1, the load generator and the simulator to
// the others; two-core leaves every process unpinned. Every target is a
// ratio to the bare proxy measured in the same run and layout, judged on
// F. Beside them: token counting against npm's tiktoken, the ledger's
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
