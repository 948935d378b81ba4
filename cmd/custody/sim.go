package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/custody-gateway/custody/sim"
)

// runSim runs the reference upstream simulator alone.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sim", stderr)
	listen := fs.String("listen", "127.0.0.1:9000", "listen on `ADDR` (host:port)")
	var models, faults stringList
	fs.Var(&models, "model", "serve the model `NAME` (repeatable; default sim-1)")
	fs.Var(&faults, "fault", "apply the fault `NAME` to every request (repeatable): "+faultNames())
	allowHeader := fs.Bool("allow-fault-header", false, "honour X-Sim-Fault on each request")
	tags := fs.Bool("ownership-tags", false, "KV pages carry (request, tenant, generation); foreign reads fail closed")
	capacity := fs.Int("capacity", 0, "prefill accepts `TOKENS` prompt tokens (default 32768)")
	variant := fs.Int("variant", 0, "model variant `N`: 0 = the honest model; n > 0 = a close variant")
	delay := fs.Duration("token-delay", 0, "model time per generated token, a `DURATION` (e.g. 5ms)")
	prefill := fs.Duration("prefill-delay", 0, "model time per prompt token the prefix cache does not hold, a `DURATION` (e.g. 20us)")
	withSynopsis(fs, "custody sim [--listen ADDR] [--model NAME]... [--fault NAME]... [--allow-fault-header]\n"+
		"                  [--ownership-tags] [--capacity TOKENS] [--variant N] [--token-delay DURATION]\n"+
		"                  [--prefill-delay DURATION]",
		"Runs the reference upstream simulator alone: an OpenAI-compatible API on ADDR/v1, deterministic,\n"+
			"honest unless told to misbehave with --fault (or X-Sim-Fault, with --allow-fault-header).\n"+
			"SIGINT or SIGTERM stops it.",
		"0  stopped by SIGINT or SIGTERM after a clean shutdown",
		"1  could not start (the address in use) or the server failed")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "sim takes no arguments, got %q", fs.Args())
	}
	cfg := sim.Config{Models: models, Capacity: *capacity, AllowFaultHeader: *allowHeader,
		OwnershipTags: *tags, Variant: *variant, TokenDelay: *delay, PrefillDelay: *prefill}
	for _, f := range faults {
		ft, err := sim.ParseFault(f)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		cfg.Faults = append(cfg.Faults, ft)
	}
	s, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "custody sim: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "custody sim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "custody sim: OpenAI-compatible simulator on http://%s/v1 (faults: %v)\n", ln.Addr(), faults)
	return serveUntilDone(ctx, &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}, ln, stderr)
}

func faultNames() string {
	s := ""
	for i, f := range sim.Faults() {
		if i > 0 {
			s += ", "
		}
		s += string(f)
	}
	return s
}

// serveUntilDone serves until ctx is cancelled, then shuts down
// gracefully (in-flight requests get 30 s).
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, stderr io.Writer) int {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "custody: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "custody: shutdown: %v\n", err)
		return 1
	}
	return 0
}
