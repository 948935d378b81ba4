package gateway

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/sse"
)

// relayStream relays an upstream SSE stream event by event, never
// buffering it whole. The stream is read as the SSE specification reads
// it (sse.Reader: CR, LF and CRLF line ends), which is how the clients
// read it, and the client receives only the events custody read,
// re-framed canonically (Event.Out, or the bridge's translation): the
// upstream's comments, id, retry and unknown fields, and its bytes as
// such, never reach the client. The first event is held until the
// stream's identity (request-id echo, model, replay of its id) is
// checked, so a wrong stream is refused before a byte reaches the
// client. Every later event is checked before it is written; a violation
// ends the stream with one error event and no terminal event. The end of
// the stream is released only after the transaction is durably recorded.
func (x *exchange) relayStream(ctx context.Context, cancel context.CancelFunc, rt route, resp *http.Response) error {
	tx := x.tx
	rc := http.NewResponseController(x.w)
	// The provider's timeout (or limits.stream_idle, if shorter) bounds
	// each gap between events that carry something; keep-alives do not
	// reset it. limits.stream_max_duration bounds the whole stream.
	idleFor := rt.prov.Timeout
	if l := x.g.cfg.Limits.StreamIdle; l > 0 && (idleFor <= 0 || l < idleFor) {
		idleFor = l
	}
	idle := time.AfterFunc(idleFor, cancel)
	defer idle.Stop()
	var tooLong atomic.Bool
	if l := x.g.cfg.Limits.StreamMaxDuration; l > 0 {
		whole := time.AfterFunc(l, func() { tooLong.Store(true); cancel() })
		defer whole.Stop()
	}

	x.checkEcho(rt, resp)
	if tx.Rejected() {
		return firstFailure(tx)
	}
	// One event holds at most limits.max_event_bytes in the reader (and
	// a few copies of it in its checks and relay); the reservation in the
	// in-flight budget grows with the largest event read.
	maxEvent := x.g.cfg.Limits.MaxEventBytes
	meter := &streamMeter{r: resp.Body, h: x.hold, base: firstReserve}
	out := &flushOnWait{r: meter, flush: rc.Flush}
	sr := sse.NewReader(out, int(min(maxEvent, math.MaxInt32)))
	events := x.wire.NewStreamReader()
	var tb StreamBridge
	if x.bridge != nil {
		tb = x.bridge.NewStream()
	}
	scan := &streamScan{x: x}
	digest := newStreamDigest() // for the replay check of a stream with no id
	var (
		sawUsage bool
		cached   int    // usage.prompt_tokens_details.cached_tokens
		end      []byte // what ends the stream, once its terminal event came
		first    = true
		// modelPending is set while no event has named the model.
		modelPending bool
		readError    error
		maxSize      = x.g.cfg.Limits.MaxStreamBytes
	)
	for {
		raw, err := sr.Next()
		if err != nil {
			readError = err
			break
		}
		meter.dispatched()
		// Every byte read counts, comments and ignored fields included:
		// they hold the connection as well.
		if maxSize > 0 && sr.Read() > maxSize {
			tx.Fail(custody.CheckUpstream, custody.CodeResponseTooLarge, "over limits.max_stream_bytes")
			return custody.Errorf(custody.CodeResponseTooLarge,
				"provider %s sent a stream longer than limits.max_stream_bytes (%d bytes)", rt.cfg.Provider, maxSize)
		}
		if len(raw.Data) == 0 {
			continue // no dialect reads an empty event: not relayed
		}
		ev, err := events.Read(raw.Name, raw.Data)
		if !ev.KeepAlive {
			idle.Reset(idleFor)
		}
		if err == nil {
			err = x.choicesError(ev.Choices)
		}
		if raw.Cut && (err != nil || !ev.Terminal) {
			break // the input ended inside this event: truncated
		}
		if err != nil && x.g.checks.runs(custody.CodeOf(err).Check()) {
			return x.upstreamFault(rt, err)
		}
		digest.add(raw.Data)
		tx.FinishReasons = keepFinish(tx.FinishReasons, ev.Finish)
		if ev.Usage != nil {
			// Before the terminal check: a Responses stream reports its
			// usage in its terminal event.
			sawUsage = true
			tx.PromptTokensReported, tx.CompletionTokens = ev.Usage.Prompt, ev.Usage.Completion
			cached = ev.Usage.Cached
		}
		if modelPending && (ev.Model != "" || ev.Terminal) {
			// The model a first event left unnamed, checked at the first
			// event that names it, before that event is relayed; a
			// terminal event that names none is refused as naming none.
			if x.nameModel(rt, ev.Model); tx.Rejected() {
				return firstFailure(tx)
			}
			modelPending = false
		}
		if ev.Terminal {
			// A terminal event may repeat the answer (a Responses
			// response.completed): its texts are scanned too.
			if len(ev.Texts) > 0 && x.g.checks.runs(custody.CheckContamination) && scan.feed(ev.Texts) {
				return firstFailure(tx)
			}
			// The terminal event may carry what the contract reads (a
			// Responses response.completed: status, usage, output).
			x.contractEvent(&ev, raw.Name, raw.Data)
			end = ev.End
			if tb != nil {
				end = tb.End()
			}
			break
		}
		if first {
			first = false
			tx.ResponseModel, tx.Fingerprint, tx.ResponseID = custody.Bound(ev.Model), custody.Bound(ev.Fingerprint), custody.Bound(ev.ID)
			if err := identityError(ev.ID, ev.Model, ev.Fingerprint); err != nil && x.g.checks.runs(custody.CheckShape) {
				return x.upstreamFault(rt, err) // nothing was relayed yet
			}
			// A first event that names no model (llama.cpp's Responses
			// response.created) leaves the model check to the first
			// event that does, at the latest the terminal one.
			if modelPending = ev.Model == ""; !modelPending {
				x.checkModel(rt)
			}
			x.checkReplay(rt, ev.ID, nil)
			if tx.Rejected() {
				return firstFailure(tx)
			}
		}
		// The contamination scan reads each event's texts before the
		// event is relayed.
		if len(ev.Texts) > 0 && x.g.checks.runs(custody.CheckContamination) {
			if scan.feed(ev.Texts) {
				return firstFailure(tx)
			}
		}
		x.contractEvent(&ev, raw.Name, raw.Data)
		if !x.started {
			x.startStream()
		}
		// What the client receives is what was checked, canonically
		// framed: never raw's bytes as they came.
		body := ev.Out
		if tb != nil {
			if body, err = tb.Event(raw.Data, &ev); err != nil {
				return custody.Wrap(custody.CodeInternal, err, "the stream could not be translated")
			}
		} else if ev.UsageOnly && !x.req.IncludeUsage() {
			continue // custody asked for it; the client did not
		}
		if len(body) == 0 {
			continue
		}
		if err := x.deliver(body); err != nil {
			return x.clientGone(err)
		}
		if err := out.delivered(); err != nil {
			return x.clientGone(err)
		}
	}
	if out.err != nil {
		return x.clientGone(out.err)
	}
	if readError != nil && readError != io.EOF {
		if x.r.Context().Err() != nil {
			return x.clientGone(x.r.Context().Err())
		}
		if e := meter.refused(readError); e != nil {
			return e // past the in-flight budget
		}
		if errors.Is(readError, sse.ErrEventTooLarge) {
			tx.Fail(custody.CheckUpstream, custody.CodeResponseTooLarge, "over limits.max_event_bytes")
			return custody.Errorf(custody.CodeResponseTooLarge,
				"provider %s sent a stream event longer than limits.max_event_bytes (%d bytes)", rt.cfg.Provider, maxEvent)
		}
		if ctx.Err() != nil {
			if tooLong.Load() {
				return custody.Errorf(custody.CodeUpstreamTimeout, "provider %s's stream outlasted limits.stream_max_duration", rt.cfg.Provider)
			}
			return custody.Errorf(custody.CodeUpstreamTimeout, "provider %s went silent mid-stream", rt.cfg.Provider)
		}
		if first {
			return custody.Wrap(custody.CodeUpstreamUnavailable, readError, "provider "+rt.cfg.Provider+" broke off the stream")
		}
	}
	if end == nil && !first {
		// The upstream ended (or dropped the connection) without its
		// terminal event: whatever came is not known to be the whole
		// answer, and custody never completes it with a [DONE] of its own.
		tx.Fail(custody.CheckStream, custody.CodeStreamTruncated, "no terminal event")
		return custody.Wrap(custody.CodeStreamTruncated, readError,
			"provider "+rt.cfg.Provider+" ended the stream without its terminal event")
	}
	if first {
		tx.Fail(custody.CheckShape, custody.CodeUpstreamErrorAsSuccess, "empty stream")
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "provider %s sent an empty stream", rt.cfg.Provider)
	}
	if x.g.checks.runs(custody.CheckStream) {
		if x.verdictOf(events.End(sawUsage), custody.CheckStream); tx.Rejected() {
			return firstFailure(tx)
		}
	}
	// End-of-stream checks: whatever needs the whole stream runs here,
	// before the verdict is decided and recorded.
	if x.checkStreamReplay(rt, digest); tx.Rejected() {
		return firstFailure(tx)
	}
	x.checkPromptTokens(sawUsage)
	x.checkCache(rt, cached)
	scan.finish()
	x.checkContractStream()
	if tx.Rejected() {
		return firstFailure(tx)
	}
	tx.Status = http.StatusOK
	if err := x.record(); err != nil {
		return err
	}
	x.writeVerdict(true)
	x.w.Write(end)
	rc.Flush()
	return nil
}

// nameModel checks the model a stream named after its first event: its
// size, then the model check; an outcome that rejects ends the stream.
func (x *exchange) nameModel(rt route, model string) {
	x.tx.ResponseModel = custody.Bound(model)
	if err := identityError("", model, ""); err != nil && x.g.checks.runs(custody.CheckShape) {
		x.verdictOf(err, custody.CheckShape)
		return
	}
	x.checkModel(rt)
}

// The trailers that carry a stream's final verdict (README.md, Talk to it).
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
		x.w.Write(x.front.StreamVerdict(tx))
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
	ev := x.front.StreamError(e)
	x.respCommit.Write(ev)
	err := x.record()
	if err != nil {
		e = clientError(err)
		x.tx.Fail(e.Code.Check(), e.Code, "")
		ev = x.front.StreamError(e)
	}
	x.w.Write(ev)
	x.writeVerdict(err == nil)
	http.NewResponseController(x.w).Flush()
}

// clientGone marks a transaction whose client disconnected.
func (x *exchange) clientGone(err error) error {
	return &custody.Error{Code: custody.CodeClientClosed, Message: "the client closed the connection", Err: errors.Join(err, context.Canceled)}
}
