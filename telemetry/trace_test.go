package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/custody-gateway/custody"
)

// collector is a test OTLP/HTTP endpoint keeping every export raw.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Write(out)
}

// spans decodes every export and returns the spans and the raw bytes.
func (c *collector) spans(t *testing.T) ([]*tracepb.Span, []byte) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []*tracepb.Span
	var raw []byte
	for _, b := range c.bodies {
		raw = append(raw, b...)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatalf("decoding an export: %v", err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				all = append(all, ss.Spans...)
			}
		}
	}
	return all, raw
}

func attrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// str renders an attribute value for comparison.
func str(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.Values {
			parts = append(parts, str(e))
		}
		return fmt.Sprint(parts)
	}
	return fmt.Sprintf("%v", v)
}

func TestNewTracerNilWithoutEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := NewTracer(context.Background())
	if err != nil || tr != nil {
		t.Fatalf("NewTracer = %v, %v; want nil, nil", tr, err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown on nil: %v", err)
	}
}

func TestTracesExportedOverOTLP(t *testing.T) {
	for _, env := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Run(env, func(t *testing.T) {
			col := &collector{}
			cs := httptest.NewServer(col)
			defer cs.Close()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			if env == "OTEL_EXPORTER_OTLP_ENDPOINT" {
				t.Setenv(env, cs.URL)
			} else {
				t.Setenv(env, cs.URL+"/v1/traces") // the signal endpoint is used as is
			}
			tr, err := NewTracer(context.Background())
			if err != nil || tr == nil {
				t.Fatalf("NewTracer = %v, %v", tr, err)
			}
			s := newStack(t, nil, tr)
			const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
			if status, _ := s.chat("sim-1", false, "Traceparent", "00-"+clientTrace+"-"+clientSpan+"-01"); status != 200 {
				t.Fatalf("status %d", status)
			}
			if status, _ := s.chat("fallback-1", false); status != 200 {
				t.Fatalf("fallback status %d", status)
			}
			if status, _ := s.chat("liar-1", false); status != 502 {
				t.Fatalf("liar status %d", status)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			spans, raw := col.spans(t)
			if bytes.Contains(raw, []byte(marker)) {
				t.Fatal("the prompt marker is in the OTLP export")
			}
			checkSpans(t, spans, clientTrace, clientSpan, s.upstream.traceparents())
		})
	}
}

func checkSpans(t *testing.T, spans []*tracepb.Span, clientTrace, clientSpan string, upstreamTP []string) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	var txs, ups []*tracepb.Span
	for _, s := range spans {
		byID[hex.EncodeToString(s.SpanId)] = s
		switch s.Name {
		case SpanTransaction:
			txs = append(txs, s)
		case SpanUpstream:
			ups = append(ups, s)
		default:
			t.Errorf("unexpected span %q", s.Name)
		}
	}
	// Three transactions; four attempts (the fallback tried twice).
	if len(txs) != 3 || len(ups) != 4 {
		t.Fatalf("%d transaction and %d upstream spans, want 3 and 4", len(txs), len(ups))
	}
	for _, u := range ups {
		p := byID[hex.EncodeToString(u.ParentSpanId)]
		if p == nil || p.Name != SpanTransaction || !bytes.Equal(p.TraceId, u.TraceId) {
			t.Errorf("upstream span %x is not a child of a transaction span", u.SpanId)
		}
		if u.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("upstream span kind %v", u.Kind)
		}
		if a := attrs(u); str(a["gen_ai.provider.name"]) == "" || str(a["gen_ai.request.model"]) != "sim-1" {
			t.Errorf("upstream span attributes %v", u.Attributes)
		}
	}
	byModel := map[string]*tracepb.Span{}
	for _, tx := range txs {
		if tx.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("transaction span kind %v", tx.Kind)
		}
		byModel[str(attrs(tx)["gen_ai.request.model"])] = tx
	}

	// The client's trace is continued, and what the honest upstream was
	// sent names the attempt's span.
	first := byModel["sim-1"]
	if first == nil {
		t.Fatal("no span for sim-1")
	}
	if hex.EncodeToString(first.TraceId) != clientTrace || hex.EncodeToString(first.ParentSpanId) != clientSpan {
		t.Errorf("transaction span %x/%x does not continue the client's traceparent", first.TraceId, first.ParentSpanId)
	}
	var attempt *tracepb.Span
	for _, u := range ups {
		if bytes.Equal(u.ParentSpanId, first.SpanId) {
			attempt = u
		}
	}
	wantTP := fmt.Sprintf("00-%x-%x-01", attempt.GetTraceId(), attempt.GetSpanId())
	if !slices.Contains(upstreamTP, wantTP) {
		t.Errorf("upstream was sent %q, want %s among them", upstreamTP, wantTP)
	}

	for _, c := range []struct {
		model string
		want  map[string]string
	}{
		{"sim-1", map[string]string{"gen_ai.response.model": "sim-1", "gen_ai.provider.name": "sim",
			"custody.verdict": "verified", "custody.check_codes": "[]", "custody.fallback": "none", "gen_ai.operation.name": "chat"}},
		{"fallback-1", map[string]string{"gen_ai.provider.name": "sim", "custody.verdict": "verified", "custody.fallback": "broken>sim"}},
		{"liar-1", map[string]string{"gen_ai.response.model": "sim-fallback-1", "custody.verdict": "rejected",
			"custody.check_codes": "[model_mismatch]", "http.response.status_code": "502"}},
	} {
		t.Run(c.model, func(t *testing.T) {
			s := byModel[c.model]
			if s == nil {
				t.Fatal("no span")
			}
			a := attrs(s)
			for k, v := range c.want {
				if got := str(a[k]); a[k] == nil || got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, k := range []string{"custody.receipt_id", "gen_ai.response.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
				if a[k] == nil || str(a[k]) == "" {
					t.Errorf("%s missing", k)
				}
			}
			if got := str(a["gen_ai.response.finish_reasons"]); got != "[stop]" {
				t.Errorf("gen_ai.response.finish_reasons = %s, want [stop]", got)
			}
		})
	}
}

// TestAttemptErrorsCarryNoText: an upstream error may quote the prompt,
// so an attempt's span keeps only the error's code.
func TestAttemptErrorsCarryNoText(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"plain error", fmt.Errorf("upstream said: %s", marker), "upstream_error"},
		{"custody error", custody.Errorf(custody.CodeUpstreamTimeout, "timed out on %s", marker), string(custody.CodeUpstreamTimeout)},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tr := NewTracerWith(exp, nil)
			_, end := tr.StartAttempt(context.Background(), "sim", "sim-1")
			end(502, c.err)
			defer tr.Shutdown(context.Background())
			if err := tr.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			s := spans[0]
			if s.Status.Code != codes.Error || s.Status.Description != c.want {
				t.Errorf("status %v %q, want error %q", s.Status.Code, s.Status.Description, c.want)
			}
			for _, kv := range s.Attributes {
				if strings.Contains(kv.Value.Emit(), marker) {
					t.Errorf("attribute %s carries the error text", kv.Key)
				}
				if kv.Key == "error.type" && kv.Value.AsString() != c.want {
					t.Errorf("error.type %q", kv.Value.AsString())
				}
			}
			if len(s.Events) != 0 {
				t.Errorf("events %v: an error event would carry the text", s.Events)
			}
		})
	}
}

// TestSpanFinishReasons: a transaction's span carries the upstream's
// finish reasons as gen_ai.response.finish_reasons, a string array (the
// OTel GenAI semantic conventions), for a plain response and a stream;
// a transaction with none (refused before an answer) has no such
// attribute.
func TestSpanFinishReasons(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracerWith(exp, nil)
	defer tr.Shutdown(context.Background())
	s := newStack(t, nil, tr)
	for _, stream := range []bool{false, true} {
		if status, _ := s.chat("sim-1", stream); status != 200 {
			t.Fatalf("stream %v: status %d", stream, status)
		}
	}
	// Unit: the attribute is the transaction's reasons, in order.
	_, end := tr.StartTransaction(httptest.NewRequest("POST", "/v1/chat/completions", nil))
	end(&custody.Transaction{RequestedModel: "two", FinishReasons: []string{"stop", "length"}})
	_, end = tr.StartTransaction(httptest.NewRequest("POST", "/v1/chat/completions", nil))
	end(&custody.Transaction{RequestedModel: "none", Status: 400})
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	var none bool
	for _, sp := range exp.GetSpans() {
		if sp.Name != SpanTransaction {
			continue
		}
		var model string
		var reasons []string
		var found bool
		for _, kv := range sp.Attributes {
			switch kv.Key {
			case "gen_ai.request.model":
				model = kv.Value.AsString()
			case "gen_ai.response.finish_reasons":
				if kv.Value.Type() != attribute.STRINGSLICE {
					t.Errorf("%s: finish_reasons is a %v, want a string array", model, kv.Value.Type())
				}
				reasons, found = kv.Value.AsStringSlice(), true
			}
		}
		if model == "none" {
			none = !found
			continue
		}
		got = append(got, reasons)
	}
	want := [][]string{{"stop"}, {"stop"}, {"stop", "length"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("finish reasons of the plain, streamed and unit spans: %q, want %q", got, want)
	}
	if !none {
		t.Error("a transaction without finish reasons has a gen_ai.response.finish_reasons attribute")
	}
}
