package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// slogLine is what slog's JSON handler writes for tx's record at t.
func slogLine(t *testing.T, at time.Time, tx *custody.Transaction, param string) string {
	t.Helper()
	var buf bytes.Buffer
	r := slog.NewRecord(at, slog.LevelInfo, "transaction", 0)
	r.AddAttrs(transactionAttrs(tx, param, "")...)
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func lineTx() custody.Transaction {
	return custody.Transaction{ID: custody.NewID(time.Unix(1_800_000_000, 0)), Tenant: "acme", Endpoint: "chat.completions",
		RequestedModel: "gpt-5.1", Provider: "openai-eu", ResponseModel: "gpt-5.1-2026-09-01", Verdict: custody.Verified,
		Status: 200, PromptTokensLocal: 57, PromptTokensReported: 57, Duration: 1717351 * time.Nanosecond}
}

// TestTransactionLineMatchesSlog: the hand-encoded transaction line is
// slog's JSON line byte for byte, and declines (leaving the buffer as it
// was) whatever would need escaping.
func TestTransactionLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 12, 1, 17, 0, 7, 123456789, time.UTC)
	tz := time.FixedZone("X", 5*3600+1800)
	cases := map[string]func(*custody.Transaction){
		"verified": func(*custody.Transaction) {},
		"rejected with a code and a fallback": func(tx *custody.Transaction) {
			tx.Verdict, tx.Code, tx.Status = custody.Rejected, custody.CodeModelMismatch, 502
			tx.FallbackChain = []string{"openai-eu", "azure-eu"}
		},
		"no duration, no model": func(tx *custody.Transaction) { tx.Duration, tx.ResponseModel = 0, "" },
		"long":                  func(tx *custody.Transaction) { tx.Duration = 90 * time.Minute },
		"under a millisecond":   func(tx *custody.Transaction) { tx.Duration = 3 * time.Microsecond },
		"html characters":       func(tx *custody.Transaction) { tx.Tenant = "a<b>&c'" },
	}
	for name, edit := range cases {
		for _, when := range []time.Time{at, at.Truncate(time.Second), at.In(tz)} {
			for _, param := range []string{"", "messages[0].role"} {
				tx := lineTx()
				edit(&tx)
				got, ok := appendTransactionLine(nil, when, &tx, param)
				if want := slogLine(t, when, &tx, param); !ok || string(got) != want {
					t.Errorf("%s at %v, param %q: ok %v\n got %s\nwant %s", name, when, param, ok, got, want)
				}
			}
		}
	}
	for name, edit := range map[string]func(*custody.Transaction){
		"a quote":       func(tx *custody.Transaction) { tx.RequestedModel = `a"b` },
		"a backslash":   func(tx *custody.Transaction) { tx.Provider = `a\b` },
		"a newline":     func(tx *custody.Transaction) { tx.Tenant = "a\nb" },
		"not ASCII":     func(tx *custody.Transaction) { tx.Tenant = "zürich" },
		"invalid UTF-8": func(tx *custody.Transaction) { tx.ResponseModel = "\xff" },
	} {
		tx := lineTx()
		edit(&tx)
		if got, ok := appendTransactionLine([]byte("kept"), at, &tx, ""); ok || string(got) != "kept" {
			t.Errorf("%s: ok %v, buffer %q; want it declined and the buffer as it was", name, ok, got)
		}
	}
	tx := lineTx()
	if got, ok := appendTransactionLine([]byte("kept"), at, &tx, `tools["a\"b"]`); ok || string(got) != "kept" {
		t.Errorf("a quote in the param: ok %v, buffer %q; want it declined and the buffer as it was", ok, got)
	}
}

// TestTransactionLineNamesParam: the log line of a 400 names the
// parameter the client got wrong as well as the code, on both paths (the
// hand-encoded line, and slog's when the error has a cause), and holds no
// prompt or response text: not the client-visible message, which may
// quote the request.
func TestTransactionLineNamesParam(t *testing.T) {
	const secret = "PROMPT-TEXT-7f3a"
	bad := &custody.Error{Code: custody.CodeInvalidRequest, Param: "messages[2].role",
		Message: "role must be user, assistant or system, not " + secret}
	for name, err := range map[string]error{
		"hand-encoded": bad,
		"through slog": &custody.Error{Code: bad.Code, Param: bad.Param, Message: bad.Message, Err: io.ErrUnexpectedEOF},
	} {
		t.Run(name, func(t *testing.T) {
			var txLog, slogOut bytes.Buffer
			g := &Gateway{log: slog.New(slog.NewJSONHandler(&slogOut, nil)), txLog: &txLog}
			tx := lineTx()
			tx.Verdict, tx.Code, tx.Status = custody.Rejected, custody.CodeInvalidRequest, 400
			g.logTransaction(&tx, err)
			line := txLog.String() + slogOut.String()
			if strings.Count(line, "\n") != 1 {
				t.Fatalf("want one line, got %q", line)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("%v: %q", err, line)
			}
			if got["code"] != "invalid_request" || got["param"] != "messages[2].role" || got["status"] != 400.0 {
				t.Errorf("code %v, param %v, status %v; want invalid_request, messages[2].role, 400\n%s", got["code"], got["param"], got["status"], line)
			}
			if strings.Contains(line, secret) {
				t.Errorf("the line holds the request's text: %s", line)
			}
		})
	}
	// A transaction with no parameter to blame has no param member.
	var txLog bytes.Buffer
	g := &Gateway{log: slog.New(slog.NewJSONHandler(io.Discard, nil)), txLog: &txLog}
	tx := lineTx()
	g.logTransaction(&tx, nil)
	if strings.Contains(txLog.String(), `"param"`) {
		t.Errorf("a served transaction's line names a param: %s", txLog.String())
	}
}

// FuzzTransactionLine: on any values, the hand-encoded line is slog's,
// or declined with the buffer as it was.
func FuzzTransactionLine(f *testing.F) {
	f.Add("acme", "gpt-5.1", "openai", "model_mismatch", "", 200, 57, 58, int64(1717351), int64(1_800_000_000_123_456_789))
	f.Add("a\"b", "m", "", "", "", 0, -1, 0, int64(0), int64(0))
	f.Add("acme", "gpt-5.1", "", "invalid_request", "messages[0].content", 400, -1, -1, int64(1717351), int64(1_800_000_000_123_456_789))
	f.Add("acme", "m", "", "invalid_request", "tools[\"\\n\"]", 400, -1, -1, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, tenant, model, provider, code, param string, status, local, reported int, dur, unix int64) {
		tx := lineTx()
		tx.Tenant, tx.RequestedModel, tx.Provider, tx.Code = tenant, model, provider, custody.Code(code)
		tx.Status, tx.PromptTokensLocal, tx.PromptTokensReported, tx.Duration = status, local, reported, time.Duration(dur)
		at := time.Unix(0, unix).UTC()
		got, ok := appendTransactionLine([]byte("kept"), at, &tx, param)
		if !ok {
			if string(got) != "kept" {
				t.Fatalf("declined, but the buffer is %q", got)
			}
			return
		}
		if want := "kept" + slogLine(t, at, &tx, param); string(got) != want {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkTransactionLine(b *testing.B) {
	tx := lineTx()
	at := time.Now()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf, _ = appendTransactionLine(buf[:0], at, &tx, "")
		}
	})
	b.Run("slog", func(b *testing.B) {
		b.ReportAllocs()
		h := slog.NewJSONHandler(io.Discard, nil)
		for b.Loop() {
			r := slog.NewRecord(at, slog.LevelInfo, "transaction", 0)
			r.AddAttrs(transactionAttrs(&tx, "", "")...)
			h.Handle(context.Background(), r)
		}
	})
}
