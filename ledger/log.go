package ledger

import (
	"context"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/internal/durable"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/tessera"
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
	// BatchMaxAge is the cadence of the feeder's rounds to tessera
	// (ledger.batch_max_age; zero means 2ms, serve's config default is
	// 250ms): the feeder takes a round no sooner than BatchMaxAge - 25ms
	// after the last was integrated, and tessera sequences it within the
	// 25ms (feed.go, roundPause). BatchMaxSize bounds one of
	// tessera's batches (default 1024 leaves). They set how soon a durable
	// leaf reaches the log, not Append's latency.
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

	feed     chan feedBatch    // syncer -> feeder
	futures  chan []feedFuture // feeder -> resolver, feedYield at a time
	resolved chan struct{}     // closed when the resolver returns
	closing  sync.Once
	closeErr error
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
	// Before tessera opens the log (it would sign whatever tree is on
	// disk): the journal, then the stored tree against the checkpoint and
	// the journal (startcheck.go). A torn tail is cut only once both pass.
	recs, segs, torn, err := scanJournalForOpen(filepath.Join(cfg.Dir, journalDir))
	if err != nil {
		return nil, err
	}
	if err := checkStored(ctx, logPath, k.verifier, recs); err != nil {
		return nil, err
	}
	if torn != nil {
		if err := truncate(torn.Segment, torn.Offset); err != nil {
			return nil, err
		}
		warnTorn(cfg.Logger, torn)
	}
	if err := publishVerifier(filepath.Join(logPath, verify.VerifierFile), k.vkey); err != nil {
		return nil, err
	}
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(k.signer).
		WithBatching(uint(cfg.BatchMaxSize), tesseraAge(cfg.BatchMaxAge)).
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
		futures:  make(chan []feedFuture, futureChunks),
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
	next, err := l.recover(ctx, size, recs)
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
			errs = append(errs, l.tl.stop(ctx, l.logPath))
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
