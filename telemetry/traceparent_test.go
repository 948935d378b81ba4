package telemetry

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/custody-gateway/custody/telemetry/tracecontext"
)

const (
	goodTrace  = "0af7651916cd43dd8448eb211c80319c"
	goodParent = "b7ad6b7169203331"
)

// TestTransactionIgnoresBadTraceParent: with tracing on, a transaction
// continues only a valid client trace.
func TestTransactionIgnoresBadTraceParent(t *testing.T) {
	for name, tp := range map[string]string{
		"version 01":      "01-" + goodTrace + "-" + goodParent + "-01",
		"uppercase trace": "00-" + strings.ToUpper(goodTrace) + "-" + goodParent + "-01",
		"trailing data":   "00-" + goodTrace + "-" + goodParent + "-01-x",
		"valid":           "00-" + goodTrace + "-" + goodParent + "-01",
	} {
		t.Run(name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tr := NewTracerWith(exp, nil)
			defer tr.Shutdown(context.Background())
			r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
			r.Header.Set("Traceparent", tp)
			ctx, end := tr.StartTransaction(r)
			upstreamTP, endAttempt := tr.StartAttempt(ctx, "p", "m")
			endAttempt(200, nil)
			_ = end
			continued := strings.HasPrefix(upstreamTP, "00-"+goodTrace+"-")
			if continued != (name == "valid") {
				t.Errorf("traceparent %q sent upstream as %q", tp, upstreamTP)
			}
			if _, ok := tracecontext.Parse(upstreamTP); !ok {
				t.Errorf("sent upstream an invalid traceparent %q", upstreamTP)
			}
		})
	}
}
