package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/openai"
)

// maxEvent bounds one SSE event from an upstream.
const maxEvent = 8 << 20

// relayStream relays an upstream SSE stream chunk by chunk, never
// buffering it whole. The first chunk is held until the stream's identity
// (request-id echo, model, replay of its id) is checked, so a wrong
// stream is refused before a byte reaches the client. Every later chunk
// is checked before it is written; a violation ends the stream with one
// error event and no [DONE]. The end of the stream is released only after
// the transaction is durably recorded.
func (x *exchange) relayStream(ctx context.Context, cancel context.CancelFunc, rt route, resp *http.Response) error {
	tx := x.tx
	rc := http.NewResponseController(x.w)
	// The provider's timeout bounds each gap between chunks.
	idle := time.AfterFunc(rt.prov.Timeout, cancel)
	defer idle.Stop()

	x.checkEcho(rt, resp)
	if tx.Verdict == custody.Rejected {
		return firstFailure(tx)
	}
	sr := openai.NewSSEReader(resp.Body, maxEvent)
	scan := &streamScan{x: x}
	var (
		ident     check.Stream
		chunk     openai.Response
		sawUsage  bool
		cached    int  // usage.prompt_tokens_details.cached_tokens
		sawDone   bool // the upstream sent its terminal event
		first     = true
		readError error
		size      int64 // bytes of the upstream's events so far
		maxSize   = x.g.cfg.Limits.MaxStreamBytes
	)
	for {
		ev, err := sr.Next()
		if err != nil {
			readError = err
			break
		}
		idle.Reset(rt.prov.Timeout)
		// Keep-alive comments count: they hold the connection as well.
		if size += int64(len(ev.Raw)); maxSize > 0 && size > maxSize {
			tx.Fail(custody.CheckStream, custody.CodeStreamInconsistent, "over limits.max_stream_bytes")
			return custody.Errorf(custody.CodeStreamInconsistent,
				"provider %s sent a stream longer than limits.max_stream_bytes (%d bytes)", rt.cfg.Provider, maxSize)
		}
		if ev.Comment || len(ev.Data) == 0 {
			continue // upstream keep-alives are not relayed
		}
		if ev.Done() {
			sawDone = true
			break
		}
		if ev.Cut {
			break // the input ended inside this event: truncated
		}
		if err := chunk.Decode(ev.Data); errors.Is(err, openai.ErrAmbiguous) {
			return x.ambiguous(rt, err)
		} else if err != nil {
			tx.Fail(custody.CheckStream, custody.CodeStreamInconsistent, "a chunk is not JSON")
			return custody.Errorf(custody.CodeStreamInconsistent, "provider %s sent a chunk that is not JSON", rt.cfg.Provider)
		}
		if x.g.skipChecks {
			// Benchmarks only: relay, without checks.
		} else if err := ident.Chunk(&chunk); err != nil {
			x.verdictOf(err, custody.CheckStream)
			return err
		}
		usageChunk := chunk.Usage != nil && len(chunk.Choices) == 0
		if chunk.Usage != nil {
			sawUsage = true
			tx.PromptTokensReported, tx.CompletionTokens = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
			cached = chunk.Usage.Cached()
		}
		if first && x.g.skipChecks {
			first = false
		} else if first {
			first = false
			tx.ResponseModel, tx.Fingerprint, tx.ResponseID = chunk.Model, chunk.SystemFingerprint, chunk.ID
			x.checkModel(rt)
			x.checkReplay(rt, chunk.ID, nil)
			if tx.Verdict == custody.Rejected {
				return firstFailure(tx)
			}
		}
		if text := chunk.Text(); text != "" && !x.g.skipChecks {
			if scan.feed(text) {
				return firstFailure(tx)
			}
		}
		if !x.started {
			x.startStream()
		}
		if usageChunk && !x.req.IncludeUsage {
			continue // custody asked for it; the client did not
		}
		if err := x.deliver(ev.Raw); err != nil {
			return x.clientGone(err)
		}
		if err := rc.Flush(); err != nil {
			return x.clientGone(err)
		}
	}
	if readError != nil && readError != io.EOF {
		if x.r.Context().Err() != nil {
			return x.clientGone(x.r.Context().Err())
		}
		if ctx.Err() != nil {
			return custody.Errorf(custody.CodeUpstreamTimeout, "provider %s went silent mid-stream", rt.cfg.Provider)
		}
		if first || errors.Is(readError, openai.ErrEventTooLarge) {
			return custody.Wrap(custody.CodeUpstreamUnavailable, readError, "provider "+rt.cfg.Provider+" broke off the stream")
		}
	}
	if !sawDone && !first {
		// The upstream ended (or dropped the connection) without its
		// terminal event: whatever came is not known to be the whole
		// answer, and custody never completes it with a [DONE] of its own.
		tx.Fail(custody.CheckStream, custody.CodeStreamTruncated, "no terminal event")
		return custody.Wrap(custody.CodeStreamTruncated, readError,
			"provider "+rt.cfg.Provider+" ended the stream without its terminal event")
	}
	if first {
		tx.Fail(custody.CheckStream, custody.CodeUpstreamErrorAsSuccess, "empty stream")
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "provider %s sent an empty stream", rt.cfg.Provider)
	}
	if !x.g.skipChecks {
		if err := ident.End(sawUsage, true); err != nil {
			x.verdictOf(err, custody.CheckStream)
			return err
		}
		tx.Pass(custody.CheckStream, "")
		x.checkPromptTokens(sawUsage)
		x.checkCache(rt, cached)
		if scan.finish() {
			return firstFailure(tx)
		}
	}
	if tx.Verdict == custody.Rejected {
		return firstFailure(tx)
	}
	if tx.Verdict == "" {
		tx.Verdict = custody.Verified
	}
	tx.Status = http.StatusOK
	if err := x.record(); err != nil {
		return err
	}
	x.writeVerdict(true)
	x.w.Write(openai.DoneEvent)
	rc.Flush()
	return nil
}

// The trailers that carry a stream's final verdict (SPEC §3).
const streamTrailers = "Custody-Verdict, Custody-Checks"

// startStream sends the status and headers, with the checks so far and
// Custody-Verdict: pending; the final verdict and checks follow as SSE
// comments and trailers (writeVerdict).
func (x *exchange) startStream() {
	x.setHeaders()
	h := x.w.Header()
	h.Set("Custody-Verdict", "pending")
	h.Set("Trailer", streamTrailers)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
	x.started = true
}

// writeVerdict writes, once the transaction is recorded, the receipt and
// verdict comments (when recorded is true) and sets the trailers. The
// receipt line comes first: the response commitment covers the bytes
// before it, which is where verifiers cut a stream (verify.StripReceiptLine).
func (x *exchange) writeVerdict(recorded bool) {
	tx := x.tx
	if recorded {
		x.w.Write(openai.ReceiptComment(tx.ID))
		x.w.Write(openai.VerdictComment(string(tx.Verdict), tx.ChecksHeader()))
	}
	h := x.w.Header()
	h.Set("Custody-Verdict", string(tx.Verdict))
	h.Set("Custody-Checks", tx.ChecksHeader())
}

// endStreamWithError records the rejection, then writes one error event
// and the receipt and verdict comments; no [DONE], so SDKs raise. The
// comments come after the error event: some SDKs (go-openai) read every
// non-data line before an error event as part of the error. The error
// event is committed to like the chunks before it, so that the bytes
// before the receipt line are exactly what the commitment covers.
func (x *exchange) endStreamWithError(e *custody.Error) {
	if e.Code == custody.CodeClientClosed {
		x.record() // best effort: nobody is listening
		return
	}
	ev := openai.DataEvent(openai.ErrorBody(e.Message, e.Code.Type(), string(e.Code), e.Param))
	x.respCommit.Write(ev)
	err := x.record()
	if err != nil {
		e = clientError(err)
		ev = openai.DataEvent(openai.ErrorBody(e.Message, e.Code.Type(), string(e.Code), e.Param))
	}
	x.w.Write(ev)
	x.writeVerdict(err == nil)
	http.NewResponseController(x.w).Flush()
}

// clientGone marks a transaction whose client disconnected.
func (x *exchange) clientGone(err error) error {
	return &custody.Error{Code: custody.CodeClientClosed, Message: "the client closed the connection", Err: errors.Join(err, context.Canceled)}
}

// streamScan feeds a stream's text to the contamination scanner without
// ever making the stream wait for it: until the prompt's own fingerprints
// are ready (they are computed beside the forwarding, like the count),
// text is held and scanned as soon as they are. A finding then ends the
// stream at the next chunk; finish scans the rest before the end is
// released.
type streamScan struct {
	x        *exchange
	held     []byte
	reported bool // the finding has been recorded
}

// feed scans text (or holds it); it reports whether the transaction is
// now rejected.
func (s *streamScan) feed(text string) bool {
	sc, ready := s.x.prompt.ready()
	if !ready {
		s.held = append(s.held, text...)
		return false
	}
	if sc == nil {
		return false
	}
	if len(s.held) > 0 {
		sc.Write(s.held)
		s.held = nil
	}
	sc.Write([]byte(text))
	return s.check(sc)
}

// finish waits for the fingerprints, scans what was held and records the
// outcome; it reports whether the transaction is rejected.
func (s *streamScan) finish() bool {
	sc := s.x.prompt.wait().scanner
	if sc == nil {
		return false
	}
	if len(s.held) > 0 {
		sc.Write(s.held)
		s.held = nil
	}
	if s.check(sc) {
		return true
	}
	if !s.reported {
		s.x.tx.Pass(custody.CheckContamination, "")
	}
	return false
}

func (s *streamScan) check(sc Scanner) bool {
	if _, found := sc.Finding(); found && !s.reported {
		s.reported = true
		s.x.checkContamination()
	}
	return s.x.tx.Verdict == custody.Rejected
}

// ambiguous records and returns response_ambiguous for an upstream body
// (or chunk) whose checked members are duplicated or variant-spelled. The
// message names the member, never its value.
func (x *exchange) ambiguous(rt route, err error) error {
	detail := "ambiguous members"
	var ae *openai.AmbiguousError
	if errors.As(err, &ae) {
		detail = ae.Detail
	}
	msg := "provider " + rt.cfg.Provider + " sent an ambiguous body: " + detail
	x.tx.Fail(custody.CheckMembers, custody.CodeResponseAmbiguous, msg)
	return custody.Errorf(custody.CodeResponseAmbiguous, "%s", msg)
}
