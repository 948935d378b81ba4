package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/telemetry/tracecontext"
)

// Span names.
const (
	SpanTransaction = "custody.transaction"
	SpanUpstream    = "custody.upstream"
)

// Tracer traces transactions and upstream attempts with OpenTelemetry,
// exported over OTLP/HTTP. Its methods are gateway.Tracer's. Spans carry
// names, counts, ids and codes; never prompt or response text, nor the
// text of an error (an upstream's error message may quote the prompt).
type Tracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

// TracingEnabled reports whether the environment names an OTLP endpoint
// for traces (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
func TracingEnabled(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTracer returns a Tracer exporting over OTLP/HTTP, configured only by
// the standard OTEL_* variables (endpoint, headers, timeout, compression,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER). When
// no endpoint is set it returns nil, nil: nothing is exported, and the
// gateway keeps sending its own traceparent upstream. Call Shutdown
// before exit to flush the spans still batched.
func NewTracer(ctx context.Context) (*Tracer, error) {
	if !TracingEnabled(os.Getenv) {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "custody")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: trace resource: %w", err)
	}
	return NewTracerWith(exp, res), nil
}

// NewTracerWith returns a Tracer batching spans to exp (for tests and
// for embedding custody with an exporter of one's own). res may be nil.
func NewTracerWith(exp sdktrace.SpanExporter, res *resource.Resource) *Tracer {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp)}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/custody-gateway/custody/telemetry")}
}

// Shutdown flushes the spans still batched and stops exporting. It is
// safe on a nil Tracer and more than once.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: flushing traces: %w", err)
	}
	return nil
}

// Flush exports the spans still batched, and keeps exporting. It is
// safe on a nil Tracer.
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.ForceFlush(ctx); err != nil {
		return fmt.Errorf("telemetry: flushing traces: %w", err)
	}
	return nil
}

// StartTransaction begins the transaction's span (server kind),
// continuing the client's W3C traceparent if it sent a valid one
// (tracecontext.Parse), else starting a new trace.
func (t *Tracer) StartTransaction(r *http.Request) (context.Context, func(tx *custody.Transaction)) {
	ctx := r.Context()
	if clientTraceValid(r.Header) {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ctx, span := t.tr.Start(ctx, SpanTransaction, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
	return ctx, func(tx *custody.Transaction) {
		span.SetAttributes(transactionAttributes(tx)...)
		if tx.Verdict == custody.Rejected || tx.Status >= 500 {
			span.SetStatus(codes.Error, string(tx.Code))
		}
		span.End()
	}
}

// StartAttempt begins an upstream attempt's span (client kind) under
// ctx; the traceparent returned names it, for custody to send upstream.
func (t *Tracer) StartAttempt(ctx context.Context, provider, model string) (string, func(status int, err error)) {
	ctx, span := t.tr.Start(ctx, SpanUpstream, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.provider.name", provider), attribute.String("gen_ai.request.model", model)))
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	return carrier["traceparent"], func(status int, err error) {
		if status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		if err != nil {
			code := "upstream_error"
			var ce *custody.Error
			if errors.As(err, &ce) {
				code = string(ce.Code)
			}
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}

// transactionAttributes are the GenAI and custody attributes of a
// finished transaction.
func transactionAttributes(tx *custody.Transaction) []attribute.KeyValue {
	as := make([]attribute.KeyValue, 0, 15)
	as = append(as,
		attribute.String("gen_ai.request.model", tx.RequestedModel),
		attribute.String("custody.verdict", string(tx.Verdict)),
		attribute.StringSlice("custody.check_codes", checkCodes(tx)),
		attribute.String("custody.receipt_id", tx.ID),
		attribute.String("custody.fallback", tx.FallbackHeader()),
	)
	if op := operation(tx.Endpoint); op != "" {
		as = append(as, attribute.String("gen_ai.operation.name", op))
	}
	if tx.Status != 0 {
		as = append(as, attribute.Int("http.response.status_code", tx.Status))
	}
	if tx.ResponseModel != "" {
		as = append(as, attribute.String("gen_ai.response.model", tx.ResponseModel))
	}
	if tx.Provider != "" {
		as = append(as, attribute.String("gen_ai.provider.name", tx.Provider))
	}
	if tx.ResponseID != "" {
		as = append(as, attribute.String("gen_ai.response.id", tx.ResponseID))
	}
	if len(tx.FinishReasons) > 0 {
		// A string array, one reason per choice, as the GenAI
		// conventions define it.
		as = append(as, attribute.StringSlice("gen_ai.response.finish_reasons", tx.FinishReasons))
	}
	// The upstream's own count is what the GenAI convention reports;
	// custody's local count stands in when the upstream sent none.
	if in := tx.PromptTokensReported; in >= 0 {
		as = append(as, attribute.Int("gen_ai.usage.input_tokens", in))
	} else if tx.PromptTokensLocal >= 0 {
		as = append(as, attribute.Int("gen_ai.usage.input_tokens", tx.PromptTokensLocal))
	}
	if tx.CompletionTokens >= 0 {
		as = append(as, attribute.Int("gen_ai.usage.output_tokens", tx.CompletionTokens))
	}
	return as
}

// checkCodes are Transaction.Codes as strings.
func checkCodes(tx *custody.Transaction) []string {
	cs := []string{}
	for _, c := range tx.Codes() {
		cs = append(cs, string(c))
	}
	return cs
}

// operation is the gen_ai.operation.name of a custody endpoint.
func operation(endpoint string) string {
	switch endpoint {
	case "chat.completions", "messages", "responses":
		return "chat"
	case "completions":
		return "text_completion"
	case "embeddings":
		return "embeddings"
	}
	return ""
}

// clientTraceValid reports whether h carries exactly one valid
// traceparent; otherwise the transaction starts a new trace (and the
// client's tracestate, which belongs to its traceparent, is dropped).
func clientTraceValid(h http.Header) bool {
	v := h.Values("Traceparent")
	if len(v) != 1 {
		return false
	}
	_, ok := tracecontext.Parse(v[0])
	return ok
}
