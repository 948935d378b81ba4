package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/accounting"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/upstream"
)

// checkCapacity is the preflight: only a prompt whose bytes could exceed
// the model's capacity is counted before forwarding, and no further than
// deciding takes.
func (x *exchange) checkCapacity(p *accounting.Prepared, body []byte) error {
	m := x.model
	rule, maxTokens := x.admission(body)
	limit := rule.Limit(m.capacity, maxTokens)
	if !check.MustCount(p.Bytes(body), limit) {
		x.tx.Pass(custody.CheckCapacity, "bytes under capacity")
		return nil
	}
	least, _ := p.Exceeds(limit)
	if err := check.Admit(rule, least, m.capacity, maxTokens); err != nil {
		x.tx.Fail(custody.CheckCapacity, custody.CodeContextLengthExceeded, "")
		return err
	}
	x.tx.Pass(custody.CheckCapacity, "")
	return nil
}

// verdictOf records the outcome of check name, which returned err: a
// failure is recorded under the check the outcome table names for its
// code, so that one fault is one check=code however it was found.
func (x *exchange) verdictOf(err error, name string) {
	if err == nil {
		x.tx.Pass(name, "")
		return
	}
	code := custody.CodeOf(err)
	x.tx.Fail(code.Check(), code, clientError(err).Message)
}

func (x *exchange) checkModel(rt route) {
	tx := x.tx
	if tx.ResponseModel != "" && x.g.paths.observe(tx.RequestedModel, tx.Provider, tx.ResponseModel, tx.Fingerprint) {
		tx.PathChange = true
		if x.g.onPath != nil && x.probe == nil { // a canary is already probing
			go x.g.onPath(tx.RequestedModel, rt.index)
		}
	}
	if x.g.checks.runs(custody.CheckModel) {
		x.verdictOf(check.Model(x.tx.ResponseModel, rt.cfg.Accept, rt.cfg.Model, x.policy.RequirePinned), custody.CheckModel)
	}
}

// checkPromptTokens compares reported usage with the local count. Missing
// usage leaves the transaction unverifiable: flagged, not verified.
func (x *exchange) checkPromptTokens(haveUsage bool) {
	if !x.g.checks.runs(custody.CheckPromptTokens) {
		return
	}
	tx := x.tx
	n := x.prompt.wait().counts.For(x.engine())
	tx.PromptTokensLocal = n.Local
	if why := x.uncounted(); why != "" {
		tx.Skip(custody.CheckPromptTokens, why) // the verdict does not change: nothing was guessed
		return
	}
	if !haveUsage {
		// Nothing to hold the count against: an alarm, not a pass.
		tx.Flag(custody.CheckPromptTokens, custody.CodePromptTokenMismatch, "no usage reported")
		return
	}
	err := check.PromptTokens(tx.PromptTokensReported, n.Band)
	if err == nil && x.prompt.unrendered {
		// Only the untemplated band, far wider than the exact one, was
		// checked: the check could not run as it should, which is never
		// "ok" (docs/checks.md: a needed check that cannot run is flagged).
		tx.Flag(custody.CheckPromptTokens, custody.CodePromptTokenMismatch,
			fmt.Sprintf("bounded: the model's template could not render the prompt; checked against the untemplated band [%d,%d] only", n.Band.Lo, n.Band.Hi))
		return
	}
	x.verdictOf(err, custody.CheckPromptTokens)
}

// checkReplay claims the response id for this transaction and the body
// digest for the request it answered (check.AppendResponseClaims).
func (x *exchange) checkReplay(rt route, id string, body []byte) {
	if !x.g.checks.runs(custody.CheckReplay) || id == "" && body == nil {
		return // a stream with no id: checkStreamReplay, at its end
	}
	now := x.g.now()
	var asked [32]byte
	if body != nil {
		asked = x.wreq.Digest(rt.cfg.Model) // what the upstream answered
	}
	var room [2]check.ReplayClaim
	claims := check.AppendResponseClaims(room[:0], rt.cfg.Provider, id, x.tx.ID, asked, body)
	var err error
	for _, c := range claims {
		if err = x.g.replay.Claim(c.Key, c.Owner, now); err != nil {
			break
		}
	}
	if err == nil && x.g.sharedReplay != nil {
		err = x.claimShared(claims)
		if errors.Is(err, errIndexDown) {
			// The check could not run: never "ok". The local memory
			// still covered this replica.
			if x.g.cfg.Checks.OnIndexUnavailable == "reject" {
				x.tx.Fail(custody.CheckReplay, custody.CodeIndexUnavailable, indexDownMessage)
				return
			}
			x.tx.Flag(custody.CheckReplay, custody.CodeIndexUnavailable, "index unavailable")
			return
		}
	}
	x.verdictOf(err, custody.CheckReplay)
}

func errorsIsIndexDown(err error) bool { return errors.Is(err, errIndexDown) }

// errIndexDown is claimShared's error when the index does not answer.
var errIndexDown = errors.New("the shared index is unavailable")

const indexDownMessage = "the index shared by the replicas is unavailable, so the replay check across replicas cannot run (checks.on_index_unavailable: reject)"

// claimShared claims the response in the index that every replica
// shares, so a response delivered through one replica cannot be delivered
// again through another. If the index cannot answer, the check cannot
// run: errIndexDown, and checkReplay applies checks.on_index_unavailable.
func (x *exchange) claimShared(claims []check.ReplayClaim) error {
	for _, c := range claims {
		owner, err := x.g.sharedReplay(x.r.Context(), c.Key, c.Owner, x.g.cfg.Checks.ReplayWindow)
		if err != nil {
			x.g.log.Warn("shared replay claim failed: the replay check is skipped", "id", x.tx.ID, "err", err)
			return fmt.Errorf("%w: %w", errIndexDown, err)
		}
		if owner != c.Owner {
			// The owner may be another tenant's: named to the operator only.
			return &custody.Error{Code: custody.CodeResponseReplayed, Message: check.ReplayedMessage + " (through another replica)",
				Err: fmt.Errorf("first delivered to %s", owner)}
		}
	}
	return nil
}

// checkContamination acts on the scanner's finding by policy: reject, or
// serve flagged.
func (x *exchange) checkContamination() {
	if !x.g.checks.runs(custody.CheckContamination) {
		return
	}
	f, found := x.prompt.scanner.Finding()
	if !found {
		x.tx.Pass(custody.CheckContamination, "")
		return
	}
	// Which request the text came from is the operator's to know: the
	// tenant's record says only that it came from another one.
	x.g.log.Warn("cross-request contamination", "id", x.tx.ID, "tenant", x.tx.Tenant, "detail", f.Detail, "source", f.Source)
	if x.policy.OnContamination == "flag" {
		x.tx.Flag(custody.CheckContamination, custody.CodeCrossRequestContamination, f.Detail)
	} else {
		x.tx.Fail(custody.CheckContamination, custody.CodeCrossRequestContamination, f.Detail)
	}
}

// firstFailure is the error of the transaction's rejecting check.
func firstFailure(tx *custody.Transaction) error {
	for _, o := range tx.Outcomes {
		if o.Status == custody.StatusFailed {
			msg := o.Detail
			if o.Code == custody.CodeCrossRequestContamination {
				msg = "the upstream response carries another request's data"
			}
			if msg == "" {
				msg = "integrity check " + o.Check + " failed"
			}
			return &custody.Error{Code: o.Code, Message: msg}
		}
	}
	return errors.New("rejected without a failed check")
}

// engine is how the route that answered renders chat.
func (x *exchange) engine() template.Engine {
	if r := x.tx.Route; r >= 0 && r < len(x.model.routes) {
		return x.g.routeEngine(x.model.routes[r])
	}
	return template.EngineAuto
}

// checkEcho runs the request-id echo check when the provider echoes.
func (x *exchange) checkEcho(rt route, resp *http.Response) {
	h := rt.prov.RequestIDEcho
	if h == "" || !x.g.checks.runs(custody.CheckRequestID) {
		return
	}
	if err := check.RequestID(x.tx.ID, resp.Header.Get(h)); err != nil {
		x.tx.Fail(custody.CheckRequestID, custody.CodeOf(err), "")
		return
	}
	x.tx.Pass(custody.CheckRequestID, "")
}

// checkCache holds the upstream's cached_tokens to what the tenant can
// have cached on this provider: the prompts it sent there before this
// answer, in flight beside it included (the attempt remembered this one
// as it sent it).
func (x *exchange) checkCache(rt route, cached int) {
	if !x.g.checks.runs(custody.CheckCache) {
		return
	}
	tx := x.tx
	switch iso := rt.prov.CacheIsolation; {
	case !x.wire.Traits().PromptCache:
		return // no prompt cache
	case iso == "disable":
		tx.Pass(custody.CheckCache, "prompt cache disabled")
	case x.cacheKey == "":
		return // isolation off: nothing to hold the upstream to
	default:
		text, rendered := x.prompt.text, x.prompt.rendered
		bound := x.g.cacheHist.Bound(x.cacheKey, text, true)
		if bound > 0 {
			// The engine's rendering of what was shared may be longer
			// than custody's text of it, by a block at least.
			bound += cacheBlock
			if !rendered {
				bound += cacheAllowanceUntemplated
			}
		}
		if err := check.CachedTokens(cached, bound); err != nil {
			tx.Flag(custody.CheckCache, custody.CodeCacheShared, fmt.Sprintf("isolation %s: %d cached of at most %d", iso, cached, bound))
		} else {
			tx.Pass(custody.CheckCache, check.CacheDetail(iso, cached, bound))
		}
	}
}

// upstreamFault records and returns the failure of an upstream body (or
// event) that its dialect could not read: ambiguous members, not a
// response at all, or an event inconsistent with its stream. The message
// names the provider and the member, never a value.
func (x *exchange) upstreamFault(rt route, err error) error {
	e := clientError(err)
	msg := "provider " + rt.cfg.Provider + ": " + e.Message
	x.tx.Fail(e.Code.Check(), e.Code, msg)
	var said engineSaid
	if errors.As(err, &said) && said != "" {
		// The client reads the engine's words; the ledger does not keep
		// them (they are the upstream's text, not custody's).
		msg += ": " + upstream.Sanitize(string(said), rt.client.Config().APIKey)
	}
	return custody.Errorf(e.Code, "%s", msg)
}

// identityError is the shape check's refusal of a response whose id,
// model or system_fingerprint is longer than custody.BoundLimit (256
// bytes; real ones are under 100). It is the upstream's fault, and the
// transaction keeps only the string's bounded form (prefix and digest):
// refused, it is recorded like any other, before a byte of the answer
// reaches the client.
func identityError(id, model, fingerprint string) error {
	for _, f := range [...]struct{ name, v string }{{"id", id}, {"model", model}, {"system_fingerprint", fingerprint}} {
		if len(f.v) > custody.BoundLimit {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess,
				"the response's %s is %d bytes, over custody's limit of %d", f.name, len(f.v), custody.BoundLimit)
		}
	}
	return nil
}

// engineSaid is an upstream's own error message, sanitised, carried to
// the client beside custody's.
type engineSaid string

func (e engineSaid) Error() string { return string(e) }

// streamScan feeds a stream's texts to the contamination scanner without
// ever making the stream wait for it: until the prompt's own fingerprints
// are ready (they are computed beside the forwarding, like the count),
// texts are held and scanned as soon as they are. A finding then ends the
// stream at the next chunk; finish scans the rest, and the last word,
// before the end is released.
type streamScan struct {
	x        *exchange
	held     []Text // copies: an event's texts are valid until the next
	reported bool   // the finding has been recorded
}

// feed scans texts (or holds them); it reports whether the transaction is
// now rejected.
func (s *streamScan) feed(texts []Text) bool {
	sc, ready := s.x.prompt.ready()
	if !ready {
		for _, t := range texts {
			t.S = strings.Clone(t.S)
			s.held = append(s.held, t)
		}
		return false
	}
	if sc == nil {
		return false
	}
	s.flushHeld(sc)
	for _, t := range texts {
		sc.Write(t)
	}
	return s.check(sc)
}

func (s *streamScan) flushHeld(sc Scanner) {
	for _, t := range s.held {
		sc.Write(t)
	}
	s.held = nil
}

// finish waits for the fingerprints, scans what was held and the last
// word, and records the outcome; it reports whether the transaction is
// rejected.
func (s *streamScan) finish() bool {
	if !s.x.g.checks.runs(custody.CheckContamination) {
		return false
	}
	sc := s.x.prompt.wait().scanner
	if sc == nil {
		return false
	}
	s.flushHeld(sc)
	sc.End()
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
	return s.x.tx.Rejected()
}

// choicesAsker is a request that says how many choices it asked for (the
// chat dialect's n; 0: one; -1: not known).
type choicesAsker interface{ Choices() int }

// shapeOf is the shape check's error for a response read as r: its
// dialect's, or more choices than the wire request asked for.
func (x *exchange) shapeOf(r Reading) error {
	if r.Shape != nil {
		return r.Shape
	}
	return x.choicesError(r.Choices)
}

// choicesError is check.Choices of got choices against the wire
// request's n, for a wire with choices.
func (x *exchange) choicesError(got int) error {
	q, ok := x.wreq.(choicesAsker)
	if !ok || got == 0 {
		return nil
	}
	asked := q.Choices()
	if asked < 0 {
		return nil
	}
	return check.Choices(got, asked)
}
