package ledger

import (
	"context"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"
)

// DefaultOrigin is the log origin (and signing key name) when none is
// configured.
const DefaultOrigin = "custody.local/log"

// minCheckpointInterval is tessera's POSIX driver's lower bound.
const minCheckpointInterval = 100 * time.Millisecond

// Layout of Config.Dir.
const (
	logDir     = verify.LogDir // the public tlog-tiles tree (tessera POSIX), served at /log/
	journalDir = "journal"     // private: leaves acknowledged but maybe not yet in the log
	lockFile   = "ledger.lock"
)

// Config configures the ledger. The zero value of every field but Dir is
// usable.
type Config struct {
	// Dir is the ledger's directory (data_dir/ledger, say). Required.
	Dir string
	// Origin is the log's origin line and the signing key's name
	// (ledger.origin). Empty: the configured key's name, or DefaultOrigin
	// for a generated key.
	Origin string
	// KeyFile names a note signer key ("PRIVATE+KEY+origin+...") to sign
	// checkpoints and receipts with. Empty: Dir/signing.key, generated on
	// first start with mode 0600.
	KeyFile string
	// BatchMaxAge and BatchMaxSize bound tessera's sequencing batches
	// (ledger.batch_max_age; zero means 2ms, serve's config default is
	// 250ms; default 1024 leaves). They set how soon a durable leaf reaches
	// the log, not Append's latency.
	BatchMaxAge  time.Duration
	BatchMaxSize int
	// CheckpointInterval is the least time between two published
	// checkpoints (default 100ms, tessera's minimum). Tessera publishes
	// when a batch is integrated unless the last checkpoint is younger
	// than this, so a leaf is in a published checkpoint about
	// BatchMaxAge + CheckpointInterval after it is durable: with 1s
	// here, `custody verify` right after a response failed for a second.
	CheckpointInterval time.Duration
	// MaxBacklog bounds the leaves acknowledged but not yet in the log;
	// beyond it Append fails with ledger_unavailable (default 65536).
	MaxBacklog int
	// JournalSegmentSize is the size of each journal segment file, written
	// with zeros before use (default 32 MiB).
	JournalSegmentSize int64
	// Witnesses cosign each checkpoint before it is published
	// (ledger.witnesses); WitnessQuorum of them must (ledger.witness_policy
	// quorum; zero means all). None: checkpoints are published signed by
	// the log alone. WitnessTimeout bounds one round of asking them
	// (default 5s).
	Witnesses      []Witness
	WitnessQuorum  int
	WitnessTimeout time.Duration
	// Logger receives what the ledger did by itself that an operator
	// should know (a torn journal tail cut off at start). Nil: discarded.
	Logger *slog.Logger

	// journalFault is the journal's fault injection (tests only).
	journalFault func(path string, off int64) error
	journalRetry time.Duration // how often a failed journal retries (default 1s)
	logRetry     time.Duration // how often a failed log retries (default 1s)
}

// Log is custody's ledger: Append makes a transaction's leaf durable and
// returns its signed receipt; a background feeder integrates leaves into
// the tessera log in index order.
type Log struct {
	cfg     Config
	keys    *keys
	origin  string
	logPath string

	// tl is the tessera appender in use: Open's first, replaced by
	// recoverLog when it fails. The feeder owns it after Open; Close reads
	// it after the feeder has returned. Nil while recovery has none.
	tl *tlog
	// reader reads the log's files; it keeps no state, so the first
	// appender's serves for the life of the Log, whichever appender writes.
	reader tessera.LogReader
	// bundles keeps the entry bundles Transactions read last.
	bundles bundleCache
	// pcfg and opts build each appender (witnesses included), so that a
	// replacement is configured as the first was.
	pcfg posix.Config
	opts *tessera.AppendOptions
	lock *os.File

	j   *journal
	wit *witnessing // nil without witnesses

	// integrated is the number of leaves tessera has sequenced and
	// integrated (written by the resolver goroutine).
	integrated atomic.Uint64
	// failed is set by the resolver when tessera refuses a leaf or gives
	// it an unexpected index; Append fails from then on.
	failed atomic.Pointer[error]

	// configLeaf is the index of the config leaf in force (-1: none),
	// which appendLeaf stamps on every transaction leaf; AppendConfig
	// sets it, under cfgMu.
	configLeaf atomic.Int64
	cfgMu      sync.Mutex

	pmu     sync.Mutex        // guards pending
	pending map[uint64][]byte // durable leaves not yet integrated

	feed     chan feedBatch  // syncer -> feeder
	futures  chan feedFuture // feeder -> resolver
	resolved chan struct{}   // closed when the resolver returns
	closing  sync.Once
	closeErr error
}

type feedBatch struct {
	first  uint64
	leaves [][]byte
}

type feedFuture struct {
	index  uint64
	future tessera.IndexFuture
	// barrier, when set, is closed by the resolver once every future sent
	// before it is resolved (the future is then nil).
	barrier chan struct{}
}

// Open opens (creating on first start) the ledger in cfg.Dir. Before it
// returns, every leaf the journal holds that the log does not (the work a
// crash interrupted) is integrated, so Entries sees every acknowledged
// leaf.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if cfg.Dir == "" {
		return nil, errors.New("ledger: Config.Dir is required")
	}
	if cfg.BatchMaxAge <= 0 {
		cfg.BatchMaxAge = 2 * time.Millisecond
	}
	if cfg.BatchMaxSize <= 0 {
		cfg.BatchMaxSize = 1024
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = minCheckpointInterval
	}
	cfg.CheckpointInterval = max(cfg.CheckpointInterval, minCheckpointInterval)
	if cfg.JournalSegmentSize <= 0 {
		cfg.JournalSegmentSize = 32 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = 65536
	}
	if cfg.logRetry <= 0 {
		cfg.logRetry = time.Second
	}
	for _, d := range []string{cfg.Dir, filepath.Join(cfg.Dir, journalDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("opening ledger: %w", err)
		}
	}
	logPath := filepath.Join(cfg.Dir, logDir)
	if err := os.MkdirAll(logPath, 0o755); err != nil {
		return nil, fmt.Errorf("opening ledger: %w", err)
	}
	lock, err := lockDir(filepath.Join(cfg.Dir, lockFile))
	if err != nil {
		return nil, fmt.Errorf("opening ledger: %w", err)
	}
	l, err := open(ctx, cfg, logPath)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening ledger: %w", err)
	}
	l.lock = lock
	return l, nil
}

func open(ctx context.Context, cfg Config, logPath string) (*Log, error) {
	k, err := loadKeys(cfg.Dir, cfg.KeyFile, cfg.Origin)
	if err != nil {
		return nil, err
	}
	if err := publishVerifier(filepath.Join(logPath, verify.VerifierFile), k.vkey); err != nil {
		return nil, err
	}
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(k.signer).
		WithBatching(uint(cfg.BatchMaxSize), cfg.BatchMaxAge).
		WithCheckpointInterval(cfg.CheckpointInterval)
	pcfg := posix.Config{Path: logPath}
	var wit *witnessing
	if len(cfg.Witnesses) > 0 {
		q := cfg.WitnessQuorum
		if q == 0 {
			q = len(cfg.Witnesses)
		}
		w, group, wopts, err := newWitnessing(cfg.Witnesses, q, cfg.WitnessTimeout)
		if err != nil {
			return nil, err
		}
		wit, pcfg.HTTPClient = w, w.client
		opts = opts.WithWitnesses(group, wopts)
	}
	l := &Log{
		cfg: cfg, keys: k, origin: k.signer.Name(), logPath: logPath,
		pcfg: pcfg, opts: opts, wit: wit,
		pending:  map[uint64][]byte{},
		feed:     make(chan feedBatch, 4096),
		futures:  make(chan feedFuture, 1<<16),
		resolved: make(chan struct{}),
	}
	if l.tl, err = l.startTessera(ctx); err != nil {
		return nil, err
	}
	l.reader = l.tl.reader
	size, err := l.reader.IntegratedSize(ctx)
	if err != nil {
		l.tl.cancel()
		return nil, fmt.Errorf("reading log size: %w", err)
	}
	next, segs, err := l.recover(ctx, size)
	if err != nil {
		l.tl.cancel()
		return nil, err
	}
	l.integrated.Store(next)
	cl, err := l.lastConfigLeaf(ctx, next)
	if err != nil {
		l.tl.cancel()
		return nil, err
	}
	l.configLeaf.Store(cl)
	go l.feedLoop(next)
	go l.resolveLoop()
	l.j, err = openJournal(filepath.Join(cfg.Dir, journalDir), cfg.JournalSegmentSize, next, segs, l.durable, l.integrated.Load, cfg.journalFault, cfg.journalRetry)
	if err != nil {
		close(l.feed)
		<-l.resolved
		l.tl.cancel()
		return nil, err
	}
	return l, nil
}

// tlog is one tessera appender on the log directory.
type tlog struct {
	app      *tessera.Appender
	reader   tessera.LogReader
	ctx      context.Context // the appender's background work; Adds run under it
	shutdown func(context.Context) error
	cancel   context.CancelFunc // stops the background work
}

// startTessera opens a POSIX driver and an appender on the log directory.
func (l *Log) startTessera(ctx context.Context) (*tlog, error) {
	drv, err := posix.New(ctx, l.pcfg)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(context.Background())
	app, shutdown, reader, err := tessera.NewAppender(tctx, drv, l.opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return &tlog{app: app, reader: reader, ctx: tctx, shutdown: shutdown, cancel: cancel}, nil
}

// stop shuts the appender down within ctx and stops its background work.
func (t *tlog) stop(ctx context.Context) error {
	err := t.shutdown(ctx)
	t.cancel()
	return err
}

// recover integrates the journal records the log lacks, in order, and
// returns the log's size afterwards and the journal segments on disk.
func (l *Log) recover(ctx context.Context, size uint64) (uint64, []uint64, error) {
	recs, segs, torn, err := readJournal(filepath.Join(l.cfg.Dir, journalDir))
	if err != nil {
		return 0, nil, err
	}
	if torn != nil {
		warnTorn(l.cfg.Logger, torn)
	}
	var futures []feedFuture
	for _, r := range recs {
		if r.index < size {
			continue // already in the log
		}
		if r.index != size+uint64(len(futures)) {
			return 0, nil, fmt.Errorf("journal: record %d but the log has %d leaves", r.index, size)
		}
		futures = append(futures, feedFuture{index: r.index, future: l.tl.app.Add(ctx, tessera.NewEntry(r.leaf))})
	}
	for _, f := range futures {
		if err := checkFuture(f); err != nil {
			return 0, nil, fmt.Errorf("recovering journal: %w", err)
		}
	}
	return size + uint64(len(futures)), segs, nil
}

func checkFuture(f feedFuture) error {
	i, err := f.future()
	if err != nil {
		return fmt.Errorf("integrating leaf %d: %w", f.index, err)
	}
	if i.Index != f.index {
		return fmt.Errorf("leaf journaled as %d was sequenced at %d", f.index, i.Index)
	}
	return nil
}

// durable is the journal's callback: the group is on disk, hand it to the
// feeder. It runs on the syncer goroutine, before the Appends return.
func (l *Log) durable(first uint64, leaves [][]byte) {
	l.pmu.Lock()
	for i, leaf := range leaves {
		l.pending[first+uint64(i)] = leaf
	}
	l.pmu.Unlock()
	l.feed <- feedBatch{first: first, leaves: leaves}
}

// feedYield is how many leaves the feeder gives tessera between yields.
const feedYield = 64

// feedLoop adds durable leaves to tessera in index order, one round at a
// time: everything journaled since the last round goes to tessera at
// once, and the next round starts when tessera has integrated it. Under
// load the rounds grow, so tessera's fixed cost per batch (a dozen fsyncs)
// is shared by more leaves; feeding leaves as they come instead leaves
// tessera flushing one small batch per BatchMaxAge and falling behind.
//
// next is the first index not yet given to tessera. When a round fails,
// nothing more goes to that appender (a later batch would land at the
// failed one's indices): recoverLog replaces it and re-adds every pending
// leaf, and the feeder skips the ones it re-added.
func (l *Log) feedLoop(next uint64) {
	defer close(l.futures)
	for {
		b, ok := <-l.feed
		if !ok {
			return
		}
		round := []feedBatch{b}
	drain:
		for {
			select {
			case b, ok := <-l.feed:
				if !ok {
					break drain
				}
				round = append(round, b)
			default:
				break drain
			}
		}
		var last feedFuture
		added := 0
		for _, b := range round {
			for i, leaf := range b.leaves {
				idx := b.first + uint64(i)
				if idx < next {
					continue // re-added by recoverLog
				}
				last = feedFuture{index: idx, future: l.tl.app.Add(l.tl.ctx, tessera.NewEntry(leaf))}
				l.futures <- last
				next = idx + 1
				// A round of a quarter second's leaves is a millisecond or
				// more of Adds: with one P, the requests waiting behind it
				// get their turn every feedYield leaves.
				if added++; added%feedYield == 0 {
					runtime.Gosched()
				}
			}
		}
		if last.future == nil {
			continue
		}
		// Futures are memoized: the resolver gets the same answer. The
		// last one is at its index only if every batch before it was.
		if err := checkFuture(last); err != nil {
			barrier := make(chan struct{})
			l.futures <- feedFuture{barrier: barrier}
			<-barrier // the resolver has seen the failure and stopped
			l.failed.CompareAndSwap(nil, &err)
			if next, ok = l.recoverLog(); !ok {
				return
			}
		}
	}
}

// resolveLoop waits for tessera to integrate each leaf, in order.
func (l *Log) resolveLoop() {
	defer close(l.resolved)
	for f := range l.futures {
		if f.barrier != nil {
			close(f.barrier)
			continue
		}
		if l.failed.Load() != nil {
			continue // the rest of a failed round: recoverLog re-adds it
		}
		if err := checkFuture(f); err != nil {
			l.failed.Store(&err)
			l.cfg.Logger.Error("the log failed to integrate a journaled leaf: Appends are refused until it recovers, which custody tries every second by itself; "+
				"the journal holds every acknowledged leaf and recovery integrates them (free disk space if the disk is full)",
				"index", f.index, "err", err)
			continue
		}
		l.integrated.Store(f.index + 1)
		l.pmu.Lock()
		delete(l.pending, f.index)
		l.pmu.Unlock()
	}
}

// Append records tx and returns its receipt once the leaf is durable: a
// crash after Append returns cannot lose it. tx.Tenant is the tenant id;
// the leaf holds its pseudonym. tx is not modified. Any failure wraps
// custody.ErrLedgerUnavailable.
func (l *Log) Append(ctx context.Context, tx *custody.Transaction) (*verify.Receipt, error) {
	idx, leaf, wait, err := l.appendLeaf(tx)
	if err != nil {
		return nil, err
	}
	// Sign while the fsync is under way.
	r, err := l.receipt(idx, tx.ID, leaf)
	if err != nil {
		return nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot sign the receipt")
	}
	if err := wait(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// AppendIndex is Append without the receipt: it returns the leaf's index
// once the leaf is durable. The gateway uses it on the request path and
// builds receipts when they are asked for (Receipt), so that the Ed25519
// signature, the costliest step of an append, is paid only for receipts
// someone reads.
func (l *Log) AppendIndex(ctx context.Context, tx *custody.Transaction) (uint64, error) {
	idx, _, wait, err := l.appendLeaf(tx)
	if err != nil {
		return 0, err
	}
	return idx, wait(ctx)
}

// appendLeaf journals tx's leaf; wait blocks until the leaf is durable.
func (l *Log) appendLeaf(tx *custody.Transaction) (idx uint64, leaf []byte, wait func(context.Context) error, err error) {
	if p := l.failed.Load(); p != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, *p, "the ledger cannot record the transaction")
	}
	t := *tx
	t.Tenant = l.Pseudonym(tx.Tenant)
	if cl := l.configLeaf.Load(); cl >= 0 && t.ConfigLeaf == nil {
		c := uint64(cl)
		t.ConfigLeaf = &c
	}
	leaf, err = verify.EncodeLeaf(&t)
	if err != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot record the transaction")
	}
	idx, c, err := l.j.append(leaf, uint64(l.cfg.MaxBacklog))
	if err != nil {
		return 0, nil, nil, custody.Wrap(custody.CodeLedgerUnavailable, err, "the ledger cannot record the transaction")
	}
	return idx, leaf, func(ctx context.Context) error {
		select {
		case <-c.done:
		case <-ctx.Done():
			return custody.Wrap(custody.CodeLedgerUnavailable, ctx.Err(), "the ledger did not confirm the transaction in time")
		}
		if c.err != nil {
			return custody.Wrap(custody.CodeLedgerUnavailable, c.err, "the ledger cannot record the transaction")
		}
		return nil
	}, nil
}

// receipt builds the receipt of leaf at idx without any proof.
func (l *Log) receipt(idx uint64, requestID string, leaf []byte) (*verify.Receipt, error) {
	sig, err := l.keys.signer.Sign(verify.SignedMessage(leaf))
	if err != nil {
		return nil, err
	}
	req, resp := l.Salts(requestID)
	return &verify.Receipt{
		V: verify.ReceiptVersion, RequestID: requestID, Origin: l.origin,
		KeyID: verify.KeyID(l.keys.verifier),
		Index: idx, Leaf: leaf, RequestSalt: req[:], ResponseSalt: resp[:], Signature: sig,
	}, nil
}

// Receipt rebuilds the receipt of the leaf at index, which must be the
// leaf of requestID (else an error wrapping custody.ErrNotFound). Once a
// published checkpoint covers the leaf, the receipt carries it and the
// inclusion proof.
func (l *Log) Receipt(ctx context.Context, index uint64, requestID string) (*verify.Receipt, error) {
	// Pending first: the resolver marks a leaf integrated before it drops
	// it from pending, so a leaf missing from pending is in the log (or
	// does not exist).
	l.pmu.Lock()
	leaf := l.pending[index]
	l.pmu.Unlock()
	if leaf == nil && index < l.integrated.Load() {
		var err error
		if leaf, err = l.readLeaf(ctx, index); err != nil {
			return nil, err
		}
	}
	if leaf == nil {
		return nil, custody.Errorf(custody.CodeNotFound, "no receipt for this request")
	}
	tx, err := verify.DecodeLeaf(leaf)
	if err != nil || tx.ID != requestID {
		return nil, custody.Errorf(custody.CodeNotFound, "no receipt for this request")
	}
	r, err := l.receipt(index, requestID, leaf)
	if err != nil {
		return nil, err
	}
	cpRaw, err := l.reader.ReadCheckpoint(ctx)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r, nil
		}
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	cp, _, _, err := log.ParseCheckpoint(cpRaw, l.origin, l.keys.verifier)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	if cp.Size <= index {
		return r, nil
	}
	pb, err := client.NewProofBuilder(ctx, cp.Size, l.reader.ReadTile)
	if err != nil {
		return nil, fmt.Errorf("building inclusion proof: %w", err)
	}
	proof, err := pb.InclusionProof(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("building inclusion proof: %w", err)
	}
	r.Checkpoint, r.InclusionProof = string(cpRaw), proof
	r.Cosigned = l.wit != nil && l.wit.cosigned(cpRaw, l.keys.verifier)
	// The rules it was decided under, provable under the same checkpoint.
	if c := tx.ConfigLeaf; c != nil && *c < cp.Size {
		rules, err := l.readLeaf(ctx, *c)
		if err != nil {
			return nil, err
		}
		rp, err := pb.InclusionProof(ctx, *c)
		if err != nil {
			return nil, fmt.Errorf("building the rules' inclusion proof: %w", err)
		}
		r.Rules, r.RulesProof = rules, rp
	}
	return r, nil
}

// readLeaf reads one integrated leaf from its entry bundle.
func (l *Log) readLeaf(ctx context.Context, index uint64) ([]byte, error) {
	// The partial bundle on disk has the width of tessera's tree size, which
	// may be ahead of l.integrated (resolved leaf by leaf, mid-batch).
	size, err := l.reader.IntegratedSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading log size: %w", err)
	}
	eb, err := readBundle(ctx, l.reader, index, size)
	if err != nil {
		return nil, err
	}
	return entryAt(eb, index)
}

// readBundle reads and parses the entry bundle holding leaf index, of the
// width a log of size has written it.
func readBundle(ctx context.Context, r tessera.LogReader, index, size uint64) (*api.EntryBundle, error) {
	n := index / layout.EntryBundleWidth
	b, err := r.ReadEntryBundle(ctx, n, layout.PartialTileSize(0, n, size))
	if err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	eb := &api.EntryBundle{}
	if err := eb.UnmarshalText(b); err != nil {
		return nil, fmt.Errorf("reading entry bundle %d: %w", n, err)
	}
	return eb, nil
}

// entryAt is leaf index in eb, its entry bundle.
func entryAt(eb *api.EntryBundle, index uint64) ([]byte, error) {
	i := int(index % layout.EntryBundleWidth)
	if i >= len(eb.Entries) {
		return nil, fmt.Errorf("entry bundle for %d has %d entries", index, len(eb.Entries))
	}
	return eb.Entries[i], nil
}

// Entry is one leaf of the log.
type Entry struct {
	Index uint64
	Leaf  []byte
}

// Entries iterates over the leaves in the log from index from on (as of
// the call), for rebuilding an index after a crash: after Open, that is
// every leaf ever acknowledged. An error ends the iteration.
func (l *Log) Entries(ctx context.Context, from uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		size, err := l.reader.IntegratedSize(ctx)
		if err != nil {
			yield(Entry{}, fmt.Errorf("reading log size: %w", err))
			return
		}
		for ri := range layout.Range(from, size-min(from, size), size) {
			b, err := l.reader.ReadEntryBundle(ctx, ri.Index, ri.Partial)
			if err != nil {
				yield(Entry{}, fmt.Errorf("reading entry bundle %d: %w", ri.Index, err))
				return
			}
			var eb api.EntryBundle
			if err := eb.UnmarshalText(b); err != nil {
				yield(Entry{}, fmt.Errorf("reading entry bundle %d: %w", ri.Index, err))
				return
			}
			if uint(len(eb.Entries)) < ri.First+ri.N {
				yield(Entry{}, fmt.Errorf("entry bundle %d is short", ri.Index))
				return
			}
			for i := ri.First; i < ri.First+ri.N; i++ {
				if !yield(Entry{Index: ri.Index*layout.EntryBundleWidth + uint64(i), Leaf: eb.Entries[i]}, nil) {
					return
				}
			}
		}
	}
}

// ErrNotReady wraps the reason Ready gives.
var ErrNotReady = errors.New("ledger not ready")

// Ready reports whether Append can make leaves durable now: not after
// Close, not while tessera's last batch failed and recoverLog has not
// replaced it yet, and not while the journal's
// last write failed (a full disk, an I/O error) and it has not recovered
// yet; it recovers by itself once the disk takes writes again.
func (l *Log) Ready() error {
	if p := l.failed.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, *p)
	}
	l.j.mu.Lock()
	closed, err := l.j.closed, l.j.err
	l.j.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: %w", ErrNotReady, errJournalClosed)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	return nil
}

// Size is the number of leaves integrated into the log so far.
func (l *Log) Size() uint64 { return l.integrated.Load() }

// Salts are the request and response salts of requestID, derived from the
// ledger secret so that they need not be stored.
func (l *Log) Salts(requestID string) (request, response [32]byte) {
	return l.keys.macs.salt("request", requestID), l.keys.macs.salt("response", requestID)
}

// Pseudonym is the tenant's name in the log.
func (l *Log) Pseudonym(tenant string) string { return l.keys.macs.pseudonym(tenant) }

// Origin is the log's origin line.
func (l *Log) Origin() string { return l.origin }

// VerifierKey is the note verifier key of checkpoints and receipts.
func (l *Log) VerifierKey() string { return l.keys.vkey }

// Verifier verifies the ledger's checkpoints and receipts.
func (l *Log) Verifier() note.Verifier { return l.keys.verifier }

// Handler serves the log read-only under /log/ (see handler.go).
func (l *Log) Handler() http.Handler { return newHandler(l.logPath) }

// Close stops accepting Appends (they fail with ledger_unavailable),
// waits until every acknowledged leaf is in the log under a published
// checkpoint, and releases the directory.
func (l *Log) Close(ctx context.Context) error {
	l.closing.Do(func() {
		errs := []error{l.j.close()}
		close(l.feed)
		<-l.resolved
		if p := l.failed.Load(); p != nil {
			errs = append(errs, *p)
		}
		if l.tl != nil { // written by the feeder, which has returned
			errs = append(errs, l.tl.stop(ctx))
		}
		l.j.removeIntegrated()
		errs = append(errs, l.lock.Close())
		if err := errors.Join(errs...); err != nil {
			l.closeErr = fmt.Errorf("closing ledger: %w", err)
		}
	})
	return l.closeErr
}

// lockDir takes an exclusive lock on path, so that two processes never
// append to one ledger (they would both assign the same indices). The
// kernel releases it when the process dies.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another process: %w", path, err)
	}
	return f, nil
}

// publishVerifier writes the public verifier key beside the checkpoint.
func publishVerifier(path, vkey string) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == vkey+"\n" {
		return nil
	}
	if err := durable.WriteFile(path, []byte(vkey+"\n"), 0o644); err != nil {
		return fmt.Errorf("publishing verifier key: %w", err)
	}
	return nil
}
