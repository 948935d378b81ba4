package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transparency-dev/tessera"
)

// stopTimeout bounds shutting a failed appender down: its futures have
// all resolved, so it only waits for a checkpoint it may never publish.
const stopTimeout = 5 * time.Second

// errLogDiverged: the log holds leaves other than the journal's at their
// indices. Retrying cannot mend that, so recovery stops; the journal still
// holds every acknowledged leaf.
var errLogDiverged = errors.New("the log diverged from the journal")

// recoverLog runs on the feeder goroutine after a round failed and the
// resolver has stopped: it stops the failed appender and, every logRetry,
// starts a new one on the same directory and re-adds every pending leaf
// (durable, not integrated) at its journaled index, until that succeeds.
// It returns the next index to feed, or false when the ledger closes first
// (or the log diverged from the journal, which a retry cannot mend).
func (l *Log) recoverLog() (uint64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	l.tl.stop(ctx, l.logPath) // it failed already: its answer adds nothing
	cancel()
	l.tl = nil
	t := time.NewTimer(l.cfg.logRetry)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case _, ok := <-l.feed:
			if !ok {
				return 0, false
			}
			// Its leaves are pending already (durable adds them before it
			// sends), so the next attempt re-adds them.
			continue
		}
		next, err := l.reopenLog()
		if err == nil {
			l.failed.Store(nil)
			l.cfg.Logger.Info("the log recovered: Appends resume", "size", next)
			return next, true
		}
		l.failed.Store(&err)
		if errors.Is(err, errLogDiverged) {
			l.cfg.Logger.Error("the log cannot recover in process: every Append is refused until custody restarts; "+
				"the journal holds every acknowledged leaf (run custody ledger check)", "err", err)
			for range l.feed {
			}
			return 0, false
		}
		t.Reset(l.cfg.logRetry)
	}
}

// reopenLog starts a new appender and re-adds the pending leaves from the
// log's integrated size on, each of which must be sequenced at its
// journaled index. On success the new appender is l.tl.
func (l *Log) reopenLog() (uint64, error) {
	ctx := context.Background()
	tl, err := l.startTessera(ctx)
	if err != nil {
		return 0, fmt.Errorf("reopening the log: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			sctx, cancel := context.WithTimeout(ctx, stopTimeout)
			tl.stop(sctx, l.logPath)
			cancel()
		}
	}()
	size, err := tl.reader.IntegratedSize(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading log size: %w", err)
	}
	from := l.integrated.Load()
	// pending is contiguous from the integrated size: durable adds whole
	// groups in index order, and nothing resolves while recovery runs.
	var leaves [][]byte
	l.pmu.Lock()
	for i := from; ; i++ {
		leaf, found := l.pending[i]
		if !found {
			break
		}
		leaves = append(leaves, leaf)
	}
	l.pmu.Unlock()
	if size < from || size > from+uint64(len(leaves)) {
		return 0, fmt.Errorf("%w: it has %d leaves, the journal %d integrated and %d pending", errLogDiverged, size, from, len(leaves))
	}
	// A failed round may have been integrated in part: those leaves must
	// be the journal's.
	for i := from; i < size; i++ {
		leaf, err := l.readLeaf(ctx, i)
		if err != nil {
			return 0, err
		}
		if !bytes.Equal(leaf, leaves[i-from]) {
			return 0, fmt.Errorf("%w: leaf %d is not the one journaled", errLogDiverged, i)
		}
	}
	var futures []feedFuture
	for i := size; i < from+uint64(len(leaves)); i++ {
		futures = append(futures, feedFuture{index: i, future: tl.app.Add(tl.ctx, tessera.NewEntry(leaves[i-from]))})
	}
	for _, f := range futures {
		if err := checkFuture(f); err != nil {
			return 0, fmt.Errorf("re-adding journaled leaves: %w", err)
		}
	}
	next := from + uint64(len(leaves))
	// Integrated before dropped from pending, as the resolver does (see
	// Receipt).
	l.integrated.Store(next)
	l.pmu.Lock()
	for i := from; i < next; i++ {
		delete(l.pending, i)
	}
	l.pmu.Unlock()
	ok, l.tl = true, tl
	return next, nil
}
