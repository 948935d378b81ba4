package telemetry

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/custody-gateway/custody"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discard is a span exporter that drops everything: the benchmark
// measures custody's tracing work, not a collector.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkGateway is one plain chat completion through the gateway and
// the simulator, bare, with metrics, and with metrics and traces.
func BenchmarkGateway(b *testing.B) {
	for _, c := range []struct {
		name    string
		metrics bool
		traces  bool
	}{{"bare", false, false}, {"metrics", true, false}, {"metrics+traces", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			var s *stack
			var tr *Tracer
			switch {
			case c.traces:
				tr = NewTracerWith(discard{}, nil)
				defer tr.Shutdown(context.Background())
				s = newStack(b, NewMetrics([]string{"sim-1"}), tr)
			case c.metrics:
				s = newStack(b, NewMetrics([]string{"sim-1"}), nil)
			default:
				s = newStack(b, nil, nil)
			}
			b.ResetTimer()
			for b.Loop() {
				if status, _ := s.chat("sim-1", false); status != 200 {
					b.Fatalf("status %d", status)
				}
			}
		})
	}
}

// BenchmarkTracer is the tracing work of one transaction with one
// upstream attempt, spans exported to nowhere.
func BenchmarkTracer(b *testing.B) {
	tr := NewTracerWith(discard{}, nil)
	defer tr.Shutdown(context.Background())
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	tx := &custody.Transaction{ID: "01KB7Z3M8X5V9Q2R4T6W8Y0A1C", RequestedModel: "sim-1", ResponseModel: "sim-1", Provider: "sim",
		ResponseID: "chatcmpl-1", Verdict: custody.Verified, Status: 200, PromptTokensReported: 12, CompletionTokens: 30,
		Outcomes: []custody.Outcome{{Check: "model", Status: custody.StatusOK}}}
	for b.Loop() {
		ctx, end := tr.StartTransaction(r)
		tp, endAttempt := tr.StartAttempt(ctx, "sim", "sim-1")
		if len(tp) != 55 {
			b.Fatalf("traceparent %q", tp)
		}
		endAttempt(200, nil)
		end(tx)
	}
}

// BenchmarkMetrics is the metrics work of one transaction.
func BenchmarkMetrics(b *testing.B) {
	m := NewMetrics([]string{"sim-1"})
	tx := &custody.Transaction{RequestedModel: "sim-1", Provider: "sim", Verdict: custody.Verified, Status: 200,
		Outcomes: []custody.Outcome{{Check: "model", Status: custody.StatusOK}}}
	for b.Loop() {
		m.Transaction(tx)
		m.Upstream("sim", time.Millisecond)
	}
}
