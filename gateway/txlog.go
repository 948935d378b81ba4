package gateway

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/custody-gateway/custody"
)

// logTransaction writes the transaction's log line: level INFO, message
// "transaction", its identity, route, verdict and counts, and for a
// refused request its code and the parameter it blames (custody.Error's
// Param: "messages[2].role", a name, never the value), never a prompt or
// a response. With Options.TransactionLog the line is encoded here
// (appendTransactionLine) and written there, else it goes through the
// logger.
func (g *Gateway) logTransaction(tx *custody.Transaction, err error) {
	cause, param := "", ""
	if err != nil {
		e := clientError(err)
		if e.Err != nil {
			cause = e.Err.Error()
		}
		// A parameter's path is custody's, but can hold a member name the
		// client chose: bounded like every such string in the record.
		param = custody.Bound(e.Param)
	}
	if g.txLog != nil && cause == "" {
		bp := linePool.Get().(*[]byte)
		line, ok := appendTransactionLine((*bp)[:0], time.Now(), tx, param)
		if ok {
			g.txLog.Write(line)
		}
		*bp = line
		linePool.Put(bp)
		if ok {
			return
		}
	}
	// The record made here, not by LogAttrs: LogAttrs also takes the
	// caller's program counter (runtime.Callers), for a source the
	// handler is not asked to write.
	ctx, h := context.Background(), g.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "transaction", 0)
	r.AddAttrs(transactionAttrs(tx, param, cause)...)
	h.Handle(ctx, r)
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// transactionAttrs are the attributes of tx's log line, typed: no boxing
// of each value, and the verdict and code as strings (as named string
// types, slog would encode them through json.Marshal).
func transactionAttrs(tx *custody.Transaction, param, cause string) []slog.Attr {
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs, slog.String("id", tx.ID), slog.String("tenant", tx.Tenant), slog.String("endpoint", tx.Endpoint),
		slog.String("model", tx.RequestedModel), slog.String("provider", tx.Provider), slog.String("response_model", tx.ResponseModel),
		slog.String("verdict", string(tx.Verdict)), slog.Int("status", tx.Status),
		slog.Int("prompt_tokens_local", tx.PromptTokensLocal), slog.Int("prompt_tokens_reported", tx.PromptTokensReported),
		slog.Float64("duration_ms", durationMS(tx.Duration)))
	if tx.Code != "" {
		attrs = append(attrs, slog.String("code", string(tx.Code)))
	}
	if param != "" {
		attrs = append(attrs, slog.String("param", param))
	}
	if len(tx.FallbackChain) > 1 {
		attrs = append(attrs, slog.String("fallback", tx.FallbackHeader()))
	}
	if cause != "" {
		attrs = append(attrs, slog.String("cause", cause))
	}
	return attrs
}

func durationMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// appendTransactionLine appends to dst the line slog.NewJSONHandler(w,
// nil) writes for the record of tx's attributes with param (without a
// cause) at t:
// the same bytes (TestTransactionLineMatchesSlog,
// FuzzTransactionLine), without slog's record, attribute walk and
// json.Marshal of the duration. It reports false, dst unchanged, where a
// string needs escaping (a control character, a quote, a backslash,
// anything not ASCII): the caller then logs through slog, so the two
// cannot disagree.
func appendTransactionLine(dst []byte, t time.Time, tx *custody.Transaction, param string) ([]byte, bool) {
	if y := t.Year(); y < 0 || y >= 10000 {
		return dst, false // slog writes an error in place of the time
	}
	fallback := ""
	if len(tx.FallbackChain) > 1 {
		fallback = tx.FallbackHeader()
	}
	for _, s := range [...]string{tx.ID, tx.Tenant, tx.Endpoint, tx.RequestedModel, tx.Provider, tx.ResponseModel, string(tx.Verdict), string(tx.Code), param, fallback} {
		if !plainASCII(s) {
			return dst, false
		}
	}
	b := append(dst, `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"transaction"`...)
	b = plainField(b, `,"id":`, tx.ID)
	b = plainField(b, `,"tenant":`, tx.Tenant)
	b = plainField(b, `,"endpoint":`, tx.Endpoint)
	b = plainField(b, `,"model":`, tx.RequestedModel)
	b = plainField(b, `,"provider":`, tx.Provider)
	b = plainField(b, `,"response_model":`, tx.ResponseModel)
	b = plainField(b, `,"verdict":`, string(tx.Verdict))
	b = strconv.AppendInt(append(b, `,"status":`...), int64(tx.Status), 10)
	b = strconv.AppendInt(append(b, `,"prompt_tokens_local":`...), int64(tx.PromptTokensLocal), 10)
	b = strconv.AppendInt(append(b, `,"prompt_tokens_reported":`...), int64(tx.PromptTokensReported), 10)
	// encoding/json (slog's encoder of a float) writes a float64 of
	// magnitude in [1e-6, 1e21), or zero, as strconv's shortest 'f'
	// form; a duration in microseconds over a thousand is one.
	ms := durationMS(tx.Duration)
	if a := max(ms, -ms); a != 0 && (a < 1e-6 || a >= 1e21) {
		return dst, false
	}
	b = strconv.AppendFloat(append(b, `,"duration_ms":`...), ms, 'f', -1, 64)
	if tx.Code != "" {
		b = plainField(b, `,"code":`, string(tx.Code))
	}
	if param != "" {
		b = plainField(b, `,"param":`, param)
	}
	if fallback != "" {
		b = plainField(b, `,"fallback":`, fallback)
	}
	return append(b, "}\n"...), true
}

// plainASCII reports whether s is written in a JSON string as it is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func plainField(b []byte, name, s string) []byte {
	b = append(append(b, name...), '"')
	return append(append(b, s...), '"')
}
