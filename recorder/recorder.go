// Package recorder makes transactions durable: each one is appended to
// the transparency log before the client is answered, then indexed in the
// background, in batches. The log is the source of truth: a record the
// index misses (a crash between the two, a full queue) is filled in from
// the log by reconciliation, at start and then periodically.
//
// A Recorder is built once per process (cmd/custody): its hooks are
// constructor arguments, never fields rewritten while requests run, so a
// config reload swaps the gateway around it without touching it.
package recorder

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/verify"
)

// Recorder records each transaction in the transparency log, durably,
// before the client is answered; then in the index, in the background.
type Recorder struct {
	log     *ledger.Log
	idx     index.Index
	shard   string
	tenants map[string]string // pseudonym -> tenant id; read-only after New
	logger  *slog.Logger
	// onRecord and onEvent are Config's; set once by New.
	onRecord func(tx *custody.Transaction)
	onEvent  func(index.Event)

	queue   *queue
	dropped atomic.Int64
	low     atomic.Int64 // lowest leaf index dropped since the last reconcile; -1 none

	scans chan struct{} // semaphore of the lookups in the log (fromLog)

	stop chan struct{}
	done chan struct{}
}

// Config is what a Recorder is built from.
type Config struct {
	Log   *ledger.Log
	Index index.Index
	// TenantIDs are the configured tenant ids, to map the log's
	// pseudonyms back.
	TenantIDs []string
	// PublicURL is where other replicas reach this one (its log is
	// PublicURL + "/log"); "" for none.
	PublicURL string
	Logger    *slog.Logger // nil: slog.Default()
	// OnRecord, if set, is called after each durable append, on the
	// request's goroutine (metrics): it must be cheap and safe for
	// concurrent use.
	OnRecord func(tx *custody.Transaction)
	// OnEvent, if set, is called with each event once it is indexed
	// (webhooks), from the indexing goroutine: never on the request path.
	OnEvent func(index.Event)
}

// indexLinger is how long the indexer waits, after a record finds the
// queue empty, before it takes everything queued as one batch: a write of
// hundreds of records costs the index about half as much CPU per record
// as one of tens (BenchmarkPutCPU), and Lookup answers for the records
// meanwhile.
const indexLinger = 50 * time.Millisecond

// queueSize bounds the records outstanding for the index (waiting and
// being written); a crash can lose at most this many from the index,
// never from the log, and reconciliation at start rescans that many
// leaves.
const queueSize = 1 << 14

// New reconciles the index with the log and starts the indexing
// goroutine; Close stops it.
func New(ctx context.Context, c Config) (*Recorder, error) {
	l, idx, logger := c.Log, c.Index, c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	r := &Recorder{log: l, idx: idx, shard: l.Origin(), tenants: map[string]string{}, logger: logger,
		onRecord: c.OnRecord, onEvent: c.OnEvent,
		queue: newQueue(), scans: make(chan struct{}, logScans), stop: make(chan struct{}), done: make(chan struct{})}
	r.low.Store(-1)
	for _, id := range slices.Concat(c.TenantIDs, []string{config.AdminPrincipal, config.CanaryPrincipal, config.EvalPrincipal}) {
		r.tenants[l.Pseudonym(id)] = id
	}
	if err := checkOrigin(ctx, idx, l.Origin(), l.VerifierKey(), logger); err != nil {
		return nil, err
	}
	if err := idx.RegisterShard(ctx, index.Shard{Origin: l.Origin(), URL: c.PublicURL, VerifierKey: l.VerifierKey()}); err != nil {
		return nil, err
	}
	max, err := idx.MaxLeafIndex(ctx, r.shard)
	if err != nil {
		return nil, err
	}
	// Records acknowledged before a crash but not indexed lie within one
	// queue of the highest indexed leaf.
	if err := r.reconcile(ctx, max-queueSize-256); err != nil {
		return nil, err
	}
	go r.run()
	return r, nil
}

// Salts are the commitment salts of a request.
func (r *Recorder) Salts(id string) (request, response [32]byte) { return r.log.Salts(id) }

// Record appends tx durably, then queues it for the index.
func (r *Recorder) Record(ctx context.Context, tx *custody.Transaction) error {
	leafIndex, err := r.log.AppendIndex(ctx, tx)
	if err != nil {
		return err
	}
	rec := &index.Record{Transaction: *tx, Shard: r.shard, LeafIndex: int64(leafIndex)}
	rec.Outcomes = append([]custody.Outcome(nil), tx.Outcomes...)
	rec.FallbackChain = append([]string(nil), tx.FallbackChain...)
	if !r.queue.push(rec) {
		r.dropped.Add(1)
		r.markLow(rec.LeafIndex)
	}
	if r.onRecord != nil {
		r.onRecord(tx)
	}
	return nil
}

// Pending reports whether the record of request id awaits the index
// (Lookup answers it from memory until then).
func (r *Recorder) Pending(id string) bool {
	_, ok := r.queue.lookup(id)
	return ok
}

// Lookup finds the record of a request: recently recorded, or indexed.
// While the index does not answer, the newest logScanWindow leaves of
// this replica's own log are searched instead, so that recent receipts
// stay available through an index outage.
func (r *Recorder) Lookup(ctx context.Context, id string) (index.Record, error) {
	if rec, ok := r.queue.lookup(id); ok {
		return rec, nil
	}
	rec, err := r.idx.Get(ctx, id)
	if err != nil && !errors.Is(err, custody.ErrNotFound) {
		if found, ok := r.fromLog(ctx, id); ok {
			return found, nil
		}
	}
	return rec, err
}

// logScanWindow bounds the leaves one lookup in the log reads (tens of
// milliseconds of work), and logScans how many run at once: tenants can
// cause them while the index is down.
const (
	logScanWindow = 1 << 16
	logScans      = 2
)

// fromLog searches the newest logScanWindow leaves of the log for the
// transaction id. ok is false if it is not there, or too many searches
// are running already.
func (r *Recorder) fromLog(ctx context.Context, id string) (rec index.Record, ok bool) {
	select {
	case r.scans <- struct{}{}:
		defer func() { <-r.scans }()
	default:
		return index.Record{}, false
	}
	size := r.log.Size()
	from := size - min(size, logScanWindow)
	needle := []byte(id)
	for e, err := range r.log.Entries(ctx, from) {
		if err != nil {
			return index.Record{}, false
		}
		if !bytes.Contains(e.Leaf, needle) {
			continue
		}
		tx, err := verify.DecodeLeaf(e.Leaf)
		if err != nil || tx.ID != id {
			continue
		}
		if t, ok := r.tenants[tx.Tenant]; ok {
			tx.Tenant = t
		}
		return index.Record{Transaction: *tx, Shard: r.shard, LeafIndex: int64(e.Index)}, true
	}
	return index.Record{}, false
}

// Claim is the replay check's claim shared by every replica of the index:
// the request id that first claimed key within ttl.
func (r *Recorder) Claim(ctx context.Context, key, requestID string, ttl time.Duration) (string, error) {
	return r.idx.ClaimResponse(ctx, key, requestID, ttl)
}

// Ready reports whether the ledger can take leaves (not while its last
// journal write failed, a full disk say, until it has recovered).
func (r *Recorder) Ready(ctx context.Context) error { return r.log.Ready() }

// WitnessStatus says why checkpoints are not being published (the
// witnesses' quorum does not answer), nil if they are.
func (r *Recorder) WitnessStatus(ctx context.Context) error { return r.log.WitnessStatus(ctx) }

func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	var batch []index.Record
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.idx.Put(ctx, batch...)
		cancel()
		if err != nil {
			r.logger.Error("indexing failed; the log has the records and reconciliation will retry", "n", len(batch), "err", err)
			for _, rec := range batch {
				r.markLow(rec.LeafIndex)
			}
		}
		if evs := eventsOf(batch); len(evs) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := r.idx.AddEvents(ctx, evs...); err != nil {
				// The log holds the records they come from: reconciliation
				// derives them again when the index answers.
				r.logger.Error("recording events failed; reconciliation will add them from the log", "n", len(evs), "err", err)
				for _, rec := range batch {
					r.markLow(rec.LeafIndex)
				}
			}
			cancel()
			if r.onEvent != nil {
				for _, e := range evs {
					r.onEvent(e)
				}
			}
		}
		r.queue.done(batch)
		clear(batch) // drop the references to the records' slices
		batch = batch[:0]
	}
	for {
		select {
		case <-r.queue.kick:
			// Gather for a moment: one multi-row write of many records
			// costs little more than of one.
			linger := time.NewTimer(indexLinger)
			select {
			case <-linger.C:
			case <-r.stop:
			}
			linger.Stop()
			batch = r.queue.take(batch)
			flush()
		case <-tick.C:
			if low := r.low.Swap(-1); low >= 0 {
				if err := r.reconcile(context.Background(), low); err != nil {
					r.logger.Error("reconciling the index with the log", "err", err)
					r.markLow(low)
				}
			}
		case <-r.stop:
			batch = r.queue.take(batch)
			flush()
			return
		}
	}
}

func (r *Recorder) markLow(i int64) {
	for {
		low := r.low.Load()
		if (low >= 0 && low <= i) || r.low.CompareAndSwap(low, i) {
			return
		}
	}
}

// reconcile indexes every leaf of the log from index from on, with the
// events each makes (the index keeps a transaction's event once, so those
// it has already are not added again).
func (r *Recorder) reconcile(ctx context.Context, from int64) error {
	if from < 0 {
		from = 0
	}
	batch := make([]index.Record, 0, 256)
	for e, err := range r.log.Entries(ctx, uint64(from)) {
		if err != nil {
			return err
		}
		if verify.IsConfigLeaf(e.Leaf) {
			continue // the rules, not a transaction: nothing to index
		}
		tx, err := verify.DecodeLeaf(e.Leaf)
		if err != nil {
			return err
		}
		if id, ok := r.tenants[tx.Tenant]; ok {
			tx.Tenant = id
		}
		batch = append(batch, index.Record{Transaction: *tx, Shard: r.shard, LeafIndex: int64(e.Index)})
		if len(batch) == cap(batch) {
			if err := r.indexBatch(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return r.indexBatch(ctx, batch)
}

// indexBatch writes reconciled records and their events.
func (r *Recorder) indexBatch(ctx context.Context, batch []index.Record) error {
	if len(batch) == 0 {
		return nil
	}
	if err := r.idx.Put(ctx, batch...); err != nil {
		return err
	}
	return r.idx.AddEvents(ctx, eventsOf(batch)...)
}

// Close indexes what is queued and stops.
func (r *Recorder) Close() {
	close(r.stop)
	<-r.done
}

// eventsOf derives timeline events from records: violations, fallbacks
// and path changes.
func eventsOf(recs []index.Record) []index.Event {
	var evs []index.Event
	for i := range recs {
		tx := &recs[i].Transaction
		base := index.Event{Time: tx.Time, RequestID: tx.ID, Tenant: tx.Tenant, Model: tx.RequestedModel, Provider: tx.Provider}
		if tx.Code != "" && tx.Code.Integrity() {
			e := base
			e.Type, e.Code, e.Detail = index.EventViolation, tx.Code, string(tx.Verdict)
			evs = append(evs, e)
		}
		if len(tx.FallbackChain) > 1 {
			e := base
			e.Type, e.Detail = index.EventFallback, tx.FallbackHeader()
			evs = append(evs, e)
		}
		if tx.Endpoint == custody.EndpointReenroll {
			e := base
			e.Type, e.Detail = index.EventCanary, "reenrolled by an admin"
			evs = append(evs, e)
		}
		if tx.Endpoint == custody.EndpointEval && len(tx.Outcomes) > 0 { // evals.go: the run's outcome comes first
			e := base
			e.Type = index.EventEval
			e.Detail = tx.Decision + " " + tx.Outcomes[0].Detail + " path=" + tx.Provider + "|" + tx.ResponseModel + "|" + tx.Fingerprint
			evs = append(evs, e)
		}
		if tx.PathChange {
			e := base
			e.Type, e.Detail = index.EventPathChange, tx.Provider+"|"+tx.ResponseModel+"|"+tx.Fingerprint
			evs = append(evs, e)
		}
	}
	return evs
}
