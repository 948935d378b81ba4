package telemetry

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// traffic sends the stack's standard mix: two honest calls, one stream,
// one rejection (a silently swapped model) and one fallback.
func traffic(t *testing.T, s *stack) {
	t.Helper()
	for _, c := range []struct {
		name, model string
		stream      bool
		status      int
		verdict     string
	}{
		{"honest", "sim-1", false, 200, "verified"},
		{"honest again", "sim-1", false, 200, "verified"},
		{"stream", "sim-1", true, 200, "verified"},
		{"swapped model", "liar-1", false, 502, "rejected"},
		{"fallback", "fallback-1", false, 200, "verified"},
	} {
		status, verdict := s.chat(c.model, c.stream)
		if status != c.status || verdict != c.verdict {
			t.Fatalf("%s: status %d verdict %q, want %d %q", c.name, status, verdict, c.status, c.verdict)
		}
	}
}

func TestMetricsAfterTraffic(t *testing.T) {
	m := NewMetrics([]string{"sim-1", "liar-1", "fallback-1"})
	s := newStack(t, m, nil)
	traffic(t, s)
	m.Canary("sim-1/0", "oversize", false)
	m.LedgerLeaf()

	for _, c := range []struct {
		name   string
		metric float64
		want   float64
	}{
		{"requests sim-1 verified", testutil.ToFloat64(m.requests.WithLabelValues("sim-1", "sim", "verified")), 3},
		{"requests liar-1 rejected", testutil.ToFloat64(m.requests.WithLabelValues("liar-1", "liar", "rejected")), 1},
		{"requests fallback-1 verified", testutil.ToFloat64(m.requests.WithLabelValues("fallback-1", "sim", "verified")), 1},
		{"check failures model_mismatch", testutil.ToFloat64(m.checkFailures.WithLabelValues("model_mismatch")), 1},
		{"fallbacks broken to sim", testutil.ToFloat64(m.fallbacks.WithLabelValues("fallback-1", "broken", "sim")), 1},
		{"canary status", testutil.ToFloat64(m.canaryStatus.WithLabelValues("sim-1/0", "oversize")), 0},
		{"ledger leaves", testutil.ToFloat64(m.ledgerLeaves), 1},
		{"request duration observations", float64(testutil.CollectAndCount(m.requestDuration)), 1},
		{"upstream duration series", float64(testutil.CollectAndCount(m.upstreamDur)), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.metric != c.want {
				t.Errorf("got %v, want %v", c.metric, c.want)
			}
		})
	}
	if n := testutil.ToFloat64(m.pathChanges.WithLabelValues("sim-1")); n < 1 {
		t.Errorf("custody_path_changes_total{model=sim-1} = %v, want the first sighting counted", n)
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	scrape := string(body)
	for _, want := range []string{
		`custody_requests_total{model="sim-1",provider="sim",verdict="verified"} 3`,
		`custody_requests_total{model="liar-1",provider="liar",verdict="rejected"} 1`,
		`custody_check_failures_total{code="model_mismatch"} 1`,
		`custody_fallbacks_total{from="broken",model="fallback-1",to="sim"} 1`,
		`custody_path_changes_total{model="sim-1"}`,
		`custody_canary_status{probe="oversize",route="sim-1/0"} 0`,
		`custody_ledger_leaves_total 1`,
		`custody_request_duration_seconds_count 5`,
		`custody_upstream_duration_seconds_count{provider="broken"} 1`,
		`custody_upstream_duration_seconds_count{provider="liar"} 1`,
		`custody_upstream_duration_seconds_count{provider="sim"} 4`,
		`go_sched_latencies_seconds_bucket{le="+Inf"}`,
	} {
		if !strings.Contains(scrape, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(scrape, marker) {
		t.Error("the prompt marker is in the scrape")
	}
}

// TestUnknownModelIsOneLabel: a requested model outside the config is
// counted as "unknown", so traffic cannot grow the label set.
func TestUnknownModelIsOneLabel(t *testing.T) {
	m := NewMetrics([]string{"sim-1"})
	s := newStack(t, m, nil)
	for _, name := range []string{"nope-1", "nope-2"} {
		if status, _ := s.chat(name, false); status != 404 && status != 400 {
			t.Fatalf("model %s: status %d", name, status)
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	scrape := rec.Body.String()
	if strings.Contains(scrape, "nope-") {
		t.Errorf("an unconfigured model name became a label:\n%s", grepLines(scrape, "custody_requests_total"))
	}
}

// TestLogsHoldNoPromptText: the gateway's one line per transaction
// carries ids, names and counts, never the prompt.
func TestLogsHoldNoPromptText(t *testing.T) {
	s := newStack(t, nil, nil)
	traffic(t, s)
	logs := s.logs.String()
	if n := strings.Count(logs, `"msg":"transaction"`); n != 5 {
		t.Errorf("%d transaction lines, want 5:\n%s", n, logs)
	}
	if strings.Contains(logs, marker) {
		t.Errorf("the prompt marker is in the logs:\n%s", grepLines(logs, marker))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetricsKeptAcrossReload: SetModels (a config reload) changes which
// model names are labels and restarts no counter; Refusal counts the
// codes of custody's own endpoints beside the transactions'.
func TestMetricsKeptAcrossReload(t *testing.T) {
	m := NewMetrics([]string{"a"})
	m.Transaction(&custody.Transaction{RequestedModel: "a", Provider: "p", Verdict: custody.Verified})
	m.Transaction(&custody.Transaction{RequestedModel: "b", Provider: "p", Verdict: custody.Verified})
	m.SetModels([]string{"a", "b"})
	m.Transaction(&custody.Transaction{RequestedModel: "a", Provider: "p", Verdict: custody.Verified})
	m.Transaction(&custody.Transaction{RequestedModel: "b", Provider: "p", Verdict: custody.Verified})
	m.Refusal(custody.CodeNotFound)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"a, before and after", testutil.ToFloat64(m.requests.WithLabelValues("a", "p", "verified")), 2},
		{"b before it was configured", testutil.ToFloat64(m.requests.WithLabelValues("unknown", "p", "verified")), 1},
		{"b after", testutil.ToFloat64(m.requests.WithLabelValues("b", "p", "verified")), 1},
		{"not_found", testutil.ToFloat64(m.checkFailures.WithLabelValues("not_found")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
