package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/adminapi"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/recorder"
	"github.com/custody-gateway/custody/sim"
	"github.com/custody-gateway/custody/telemetry"
	"github.com/custody-gateway/custody/upstream"
)

// A child process is told its role and parameters by environment
// variables, so that the same binary works under `go run` and as a test
// binary (whose flags belong to the testing package).
const (
	roleEnv     = "CUSTODY_BENCH_ROLE"     // sim, bare, custody or disk
	upstreamEnv = "CUSTODY_BENCH_UPSTREAM" // the simulator's base URL (…/v1)
	modeEnv     = "CUSTODY_BENCH_MODE"     // custody: nochecks, checks or durable
	dirEnv      = "CUSTODY_BENCH_DIR"      // custody: its data directory; disk: where it probes
)

// benchKey is the tenant's API key in the custody children.
const benchKey = "cust-bench-key"

// runChild serves its role on a loopback port, prints "addr URL" (and,
// for custody, "pprof URL") on stdout, and serves until its stdin closes:
// the parent holds the pipe, so a child never outlives it.
func runChild(ctx context.Context, role string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var (
		h       http.Handler
		cleanup func()
		lg      *ledger.Log // the durable mode's, whose journal /metrics reports
		err     error
	)
	switch role {
	case "sim":
		h, err = sim.New(sim.Config{TokenDelay: 0})
	case "bare":
		h, err = bareProxy(os.Getenv(upstreamEnv))
	case "custody":
		h, cleanup, lg, err = custodyHandler(ctx, os.Getenv(modeEnv), os.Getenv(upstreamEnv), os.Getenv(dirEnv))
	case "disk":
		h = diskHandler(os.Getenv(dirEnv))
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		return err
	}
	if cleanup != nil {
		defer cleanup()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: 64 << 10}
	go srv.Serve(ln)
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "addr http://%s\n", ln.Addr())
	if role == "custody" || role == "bare" {
		// A separate listener, so the profiler costs the measured
		// handler nothing. Bare has one too, so that -profile-mode B can
		// put its profile and trace beside custody's.
		pln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		if lg != nil {
			// The ledger's and the runtime's lines of custody serve's
			// /metrics, for the same reader.
			m := telemetry.NewMetrics(nil)
			m.LedgerSyncs(lg.JournalSyncs)
			m.LedgerCommits(ledger.CommitBounds, lg.JournalCommitTimes)
			mux.Handle("/metrics", m.Handler())
		}
		psrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go psrv.Serve(pln)
		defer psrv.Close()
		fmt.Fprintf(out, "pprof http://%s\n", pln.Addr())
		if lg != nil {
			fmt.Fprintf(out, "syncs http://%s/metrics\n", pln.Addr())
		}
	}
	fmt.Fprintln(out, "ready")
	out.Flush()
	<-ctx.Done()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	return srv.Shutdown(sctx)
}

// bareProxy is the floor: httputil.ReverseProxy doing nothing but
// forwarding, with a connection pool as large as custody's.
func bareProxy(upstreamURL string) (http.Handler, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("bare: bad upstream %q", upstreamURL)
	}
	t := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = u.Scheme
			r.Out.URL.Host = u.Host
			r.Out.Host = u.Host
		},
		Transport: t,
	}
	// The request body is read before forwarding, as custody reads it.
	// Streamed straight through, it races the HTTP/1 server, which closes
	// the inbound body when the response headers are written: the
	// transport's last read of it then fails and tears down the upstream
	// connection mid-response (golang/go#40747), cutting ~1% of the
	// streams here.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rp.ServeHTTP(w, r)
	}), nil
}

// benchAdminKey is the admin key of the custody children (mode F's
// profiler is behind it).
const benchAdminKey = "cust-bench-admin"

// benchYAML is custody's configuration in the benchmark: one tenant with
// an API key, one OpenAI-kind provider (the simulator process), one
// model, the defaults for everything else. Mode F runs `custody serve`
// with it, plus extra (debug.pprof, so that it can be profiled).
func benchYAML(upstreamURL, dir, extra string) string {
	return fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %q
admin_keys: [%q]
tenants:
  - id: bench
    api_keys: [%q]
providers:
  - name: sim
    kind: openai
    base_url: %q
    request_id_echo: x-request-id
models:
  - name: sim-1
    context_window: 32768
    tokenizer: o200k_base
    routes:
      - provider: sim
        model: sim-1
%s`, dir, benchAdminKey, benchKey, upstreamURL, extra)
}

// benchConfig is benchYAML as modes C, D and E assemble it.
func benchConfig(upstreamURL, dir string) (*config.Config, error) {
	return config.Parse("(bench)", []byte(benchYAML(upstreamURL, dir, "")), func(string) (string, bool) { return "", false })
}

// nopRecorder records nothing (modes C and D).
type nopRecorder struct{}

func (nopRecorder) Salts(string) (request, response [32]byte) { return }
func (nopRecorder) Record(context.Context, *custody.Transaction) error {
	return nil
}

// custodyHandler assembles the gateway for a mode. The durable mode does
// what cmd/custody's start does: the ledger in dir/ledger, the sqlite
// index in dir/index.db, a recorder reconciling them, Evidence.
func custodyHandler(ctx context.Context, mode, upstreamURL, dir string) (_ http.Handler, _ func(), lg *ledger.Log, _ error) {
	if dir == "" {
		return nil, nil, nil, errors.New("custody: no data directory")
	}
	cfg, err := benchConfig(upstreamURL, dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bench config: %w", err)
	}
	// As serve: JSON logs on stderr (the parent sends a child's stderr to
	// a file, so the per-transaction log line costs its write).
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	p := cfg.Providers[0]
	clients := map[string]*upstream.Client{p.Name: upstream.New(upstream.Config{Name: p.Name, BaseURL: p.BaseURL,
		APIKey: p.APIKey, Timeout: p.Timeout, RequestIDEcho: p.RequestIDEcho,
		BreakerThreshold: p.BreakerThreshold, BreakerCooldown: p.BreakerCooldown})}
	o := gateway.Options{Config: cfg, Clients: clients, Logger: logger}
	var closers []func()
	var api *adminapi.API
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	switch mode {
	case "nochecks":
		o.Recorder, o.Checks = nopRecorder{}, []string{} // no check: the proxy path alone
	case "checks":
		o.Recorder = nopRecorder{}
	case "durable":
		l, err := ledger.Open(ctx, ledger.Config{Dir: filepath.Join(dir, "ledger"), Origin: cfg.Ledger.Origin,
			KeyFile: cfg.Ledger.KeyFile, BatchMaxAge: cfg.Ledger.BatchMaxAge, BatchMaxSize: cfg.Ledger.BatchMaxSize})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the ledger: %w", err)
		}
		lg = l
		closers = append(closers, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l.Close(cctx)
		})
		idx, err := sqlite.OpenWithLog(ctx, filepath.Join(dir, "index.db"), l)
		if err != nil {
			cleanup()
			return nil, nil, nil, fmt.Errorf("opening the index: %w", err)
		}
		closers = append(closers, func() { idx.Close() })
		rec, err := recorder.New(ctx, recorder.Config{Log: l, Index: idx, TenantIDs: []string{"bench"}, Logger: logger})
		if err != nil {
			cleanup()
			return nil, nil, nil, fmt.Errorf("starting the recorder: %w", err)
		}
		closers = append(closers, rec.Close)
		o.Recorder = rec
		// The admin API is mounted as serve mounts it.
		api = adminapi.New(adminapi.Config{Config: cfg, Recorder: rec, Index: idx, Log: l})
		o.Mounts = api.Mounts()
	default:
		return nil, nil, nil, fmt.Errorf("unknown custody mode %q", mode)
	}
	gw, err := gateway.New(o)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	if api != nil {
		api.Bind(gw)
	}
	return gw, cleanup, lg, nil
}
