package canary

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Probe names, as in config `canaries.probes` and the `probe` label of
// custody_canary_status.
const (
	ProbeEcho     = "echo"
	ProbeNeedle   = "needle"
	ProbeOversize = "oversize"
	ProbeSecret   = "secret"
	ProbeIdentity = "identity"
)

// Probes are the known probe names in the order a run takes them. secret
// runs before echo on purpose: a route that decodes from stale KV pages
// then hands the secret's page to echo, whose answer carries it.
func Probes() []string {
	return []string{ProbeSecret, ProbeEcho, ProbeNeedle, ProbeOversize, ProbeIdentity}
}

// DefaultProbes are the probes run when Config.Probes is nil: all but
// oversize, which sends a prompt past the upstream's capacity and is
// opt-in.
func DefaultProbes() []string {
	return []string{ProbeSecret, ProbeEcho, ProbeNeedle, ProbeIdentity}
}

// ProbeResult is the outcome of one probe on one route.
type ProbeResult struct {
	Probe string
	OK    bool
	// Evidence says why, in numbers and random ids, never prompt or
	// response text: "nonce k9XbQ2mZ7w missing", "p=0.0001 <= alpha=0.001".
	Evidence string
	// Code is custody's rejection code when custody rejected the probe's
	// request (a rejection is a failure: the route did not serve it).
	Code     string
	Duration time.Duration
}

func pass(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, OK: true, Evidence: fmt.Sprintf(format, args...)}
}

func fail(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, Evidence: fmt.Sprintf(format, args...)}
}

// ask sends req through custody on t and reads the answer, or returns the
// failed result saying why there is none.
func ask(ctx context.Context, t Target, probe string, req ChatRequest) (answer, *ProbeResult) {
	res, err := t.Chat(ctx, req)
	if err != nil {
		f := fail(probe, "no answer: %s", errText(err))
		return answer{}, &f
	}
	if res.Code != "" {
		f := fail(probe, "custody rejected: %s (status %d)", res.Code, res.Status)
		f.Code = res.Code
		return answer{}, &f
	}
	if res.Status != http.StatusOK {
		f := fail(probe, "status %d", res.Status)
		return answer{}, &f
	}
	a, err := parseAnswer(res.Body)
	if err != nil {
		f := fail(probe, "unreadable answer: %s", errText(err))
		return answer{}, &f
	}
	return a, nil
}

// errText is an error for evidence: transport and decoding errors carry
// no prompt text, but keep it short.
func errText(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

func zero() *float64 { z := 0.0; return &z }
