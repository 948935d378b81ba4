package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/custody-gateway/custody"
)

// TestEndpointMetric: each transaction is counted under its dialect, so a
// Messages or Responses client's traffic is told apart from chat's.
func TestEndpointMetric(t *testing.T) {
	m := NewMetrics([]string{"sim-1"})
	for _, tx := range []custody.Transaction{
		{Endpoint: "messages", RequestedModel: "sim-1", Verdict: custody.Verified},
		{Endpoint: "messages", RequestedModel: "sim-1", Verdict: custody.Rejected},
		{Endpoint: "responses", RequestedModel: "sim-1", Verdict: custody.Verified},
		{Endpoint: "chat.completions", RequestedModel: "sim-1", Verdict: custody.Verified},
	} {
		m.Transaction(&tx)
	}
	for _, c := range []struct {
		endpoint, verdict string
		want              float64
	}{{"messages", "verified", 1}, {"messages", "rejected", 1}, {"responses", "verified", 1}, {"chat.completions", "verified", 1}} {
		if got := testutil.ToFloat64(m.endpoints.WithLabelValues(c.endpoint, c.verdict)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.endpoint, c.verdict, got, c.want)
		}
	}
	if operation("messages") != "chat" || operation("responses") != "chat" {
		t.Error("the dialects' GenAI operation is not chat")
	}
}
