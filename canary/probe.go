package canary

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
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

// ProbeCache (cache.go) is opt-in: it fails, as it should, on every route
// whose provider custody does not salt (cache_isolation: off, the
// default), so an operator turns the isolation on first.

// Probes are the known probe names in the order a run takes them. secret
// runs before echo on purpose: a route that decodes from stale KV pages
// then hands the secret's page to echo, whose answer carries it.
func Probes() []string {
	return []string{ProbeSecret, ProbeEcho, ProbeNeedle, ProbeOversize, ProbeIdentity, ProbeCache}
}

// DefaultProbes are the probes run when Config.Probes is nil: all but
// oversize, which sends a prompt past the upstream's capacity and is
// opt-in.
func DefaultProbes() []string {
	return []string{ProbeSecret, ProbeEcho, ProbeNeedle, ProbeIdentity}
}

// Status is what a probe concluded about a route.
type Status string

const (
	// StatusOK: the route did what the probe asked.
	StatusOK Status = "ok"
	// StatusFailed: the route failed the probe (a wrong or missing answer,
	// a custody rejection, a different model). Failures make a route
	// amber, then red.
	StatusFailed Status = "failed"
	// StatusSkipped: the probe cannot run on this route (no known capacity,
	// a capacity too small for the probe's prompt); Evidence says why.
	// Skipped probes do not count towards health, and custody warns about
	// them at start (Runner.Plan).
	StatusSkipped Status = "skipped"
	// StatusInconclusive: the probe could not reach a verdict because the
	// upstream errored or timed out even after retries (the identity
	// probe). It says nothing about the model: it neither fails nor passes
	// a run.
	StatusInconclusive Status = "inconclusive"
)

// ProbeResult is the outcome of one probe on one route.
type ProbeResult struct {
	Probe  string
	Status Status
	// OK is Status == StatusOK.
	OK bool
	// Evidence says why, in numbers and random ids, never prompt or
	// response text: "nonce k9XbQ2mZ7w missing", "p=0.0001 <= alpha=0.001".
	Evidence string
	// Code is custody's rejection code when custody rejected the probe's
	// request (a rejection is a failure: the route did not serve it), or
	// the code of what the probe itself found (cache_shared).
	Code     string
	Duration time.Duration

	transient bool // a failure to get an answer that the upstream's state explains
}

// Outcome is Status, or for a result made without one, StatusOK or
// StatusFailed as OK says.
func (p ProbeResult) Outcome() Status {
	switch {
	case p.Status != "":
		return p.Status
	case p.OK:
		return StatusOK
	}
	return StatusFailed
}

func pass(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, Status: StatusOK, OK: true, Evidence: fmt.Sprintf(format, args...)}
}

func fail(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, Status: StatusFailed, Evidence: fmt.Sprintf(format, args...)}
}

func skip(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, Status: StatusSkipped, Evidence: fmt.Sprintf(format, args...)}
}

func inconclusive(probe, format string, args ...any) ProbeResult {
	return ProbeResult{Probe: probe, Status: StatusInconclusive, Evidence: fmt.Sprintf(format, args...)}
}

// ask sends req through custody on t and reads the answer, or returns the
// failed result saying why there is none. A failure that says nothing
// about the model (see transient) is marked so; the identity probe retries
// it and, if it persists, is inconclusive.
func ask(ctx context.Context, t Target, probe string, req ChatRequest) (answer, *ProbeResult) {
	res, err := t.Chat(ctx, req)
	return judge(probe, res, err)
}

// judge reads the answer of a Chat that returned res and err, as ask.
func judge(probe string, res Result, err error) (answer, *ProbeResult) {
	if err != nil {
		f := fail(probe, "no answer: %s", errText(err))
		f.transient = true
		return answer{}, &f
	}
	if res.Code != "" {
		f := fail(probe, "custody rejected: %s (status %d)", res.Code, res.Status)
		f.Code, f.transient = res.Code, transient(res)
		return answer{}, &f
	}
	if res.Status != http.StatusOK {
		f := fail(probe, "status %d", res.Status)
		f.transient = transient(res)
		return answer{}, &f
	}
	a, err := parseAnswer(res.Body)
	if err != nil {
		f := fail(probe, "unreadable answer: %s", errText(err))
		return answer{}, &f
	}
	return a, nil
}

// transient reports whether a Result is the upstream being unavailable,
// slow or overloaded (a 5xx or 429 of its own, custody's upstream_timeout,
// upstream_unavailable or rate_limited, or custody's own overloaded: its
// in-flight budget was full) rather than an answer custody
// judged: such a result is evidence about the serving stack's load, not
// about which model it serves.
func transient(res Result) bool {
	switch res.Code {
	case "":
		return res.Status >= 500 || res.Status == http.StatusTooManyRequests
	case string(custody.CodeUpstreamTimeout), string(custody.CodeUpstreamUnavailable), string(custody.CodeRateLimited),
		string(custody.CodeOverloaded):
		return true
	}
	return false
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
