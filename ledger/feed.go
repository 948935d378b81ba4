package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"

	"github.com/custody-gateway/custody/internal/background"
)

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

// stop shuts the appender down within ctx, stops its background work and
// waits out a checkpoint publication in flight in the log directory dir.
func (t *tlog) stop(ctx context.Context, dir string) error {
	err := t.shutdown(ctx)
	t.cancel()
	return errors.Join(err, awaitPublisher(dir))
}

// recover integrates the journal records recs (in order) the log lacks,
// and returns the log's size afterwards.
func (l *Log) recover(ctx context.Context, size uint64, recs []journalRecord) (uint64, error) {
	var futures []feedFuture
	for _, r := range recs {
		if r.index < size {
			continue // already in the log
		}
		if r.index != size+uint64(len(futures)) {
			return 0, fmt.Errorf("journal: record %d but the log has %d leaves", r.index, size)
		}
		futures = append(futures, feedFuture{index: r.index, future: l.tl.app.Add(ctx, tessera.NewEntry(r.leaf))})
	}
	for _, f := range futures {
		if err := checkFuture(f); err != nil {
			return 0, fmt.Errorf("recovering journal: %w", err)
		}
	}
	return size + uint64(len(futures)), nil
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

// feedYield is how many leaves the feeder gives tessera between yields,
// and how many futures it hands the resolver at once.
const feedYield = 64

// futureChunks is how many chunks of futures (feedYield each) the
// feeder may be ahead of the resolver. The futures go in chunks, not
// one by one, because a channel's buffer is one object that every
// collection scans whole, however empty: 65,536 futures of room were
// 1.5 MB of pointers, a quarter of a millisecond of each mark phase at
// rest.
const futureChunks = 1024

// roundFlush bounds how long tessera holds a round before sequencing it:
// long enough for the feeder to add a round under load (it yields only in
// the first half of it), short beside serve's batch_max_age.
const roundFlush = 25 * time.Millisecond

// tesseraAge is tessera's own batching age for a BatchMaxAge of age.
// Tessera starts its clock at a batch's first entry and waits it out
// whatever comes next; the feeder adds nothing more until the round is
// integrated, so that wait holds the round in memory and delays it for
// nothing. The rounds' cadence is the feeder's (roundPause), and tessera
// waits only long enough to take a whole round as one batch.
func tesseraAge(age time.Duration) time.Duration { return min(age, roundFlush) }

// roundPause is how long the feeder waits after a round is integrated
// before it takes the next: with tessera's wait, BatchMaxAge, as when
// tessera waited it all. The rounds come as often as before and as large
// (tessera's cost per request is the same), but the leaves wait in the
// journal's hand-over, not taken yet, instead of in tessera beside the
// next round's: at serve's 250 ms a profile at saturation held 1.0 MB of
// leaves against 6.7 MB, and a leaf reaches a published checkpoint in
// 0.17 s against 0.39 s (docs/ledger.md).
func roundPause(age time.Duration) time.Duration { return age - tesseraAge(age) }

// feedLoop adds durable leaves to tessera in index order, one round at a
// time: everything journaled since the last round goes to tessera at
// once, and the next round starts roundPause after tessera has integrated
// it. Under load the rounds grow, so tessera's fixed cost per batch (a
// dozen fsyncs) is shared by more leaves; feeding leaves as they come
// instead leaves tessera flushing one small batch per BatchMaxAge and
// falling behind.
//
// next is the first index not yet given to tessera. When a round fails,
// nothing more goes to that appender (a later batch would land at the
// failed one's indices): recoverLog replaces it and re-adds every pending
// leaf, and the feeder skips the ones it re-added.
func (l *Log) feedLoop(next uint64) {
	defer close(l.futures)
	pause := roundPause(l.cfg.BatchMaxAge)
	var integrated time.Time // when the last round was
	for {
		b, ok := <-l.feed
		if !ok {
			return
		}
		round := []feedBatch{b}
		if wait := pause - time.Since(integrated); wait > 0 {
			round = l.gather(round, wait)
		}
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
		var chunk []feedFuture
		added, adding := 0, time.Now()
		for _, b := range round {
			for i, leaf := range b.leaves {
				idx := b.first + uint64(i)
				if idx < next {
					continue // re-added by recoverLog
				}
				last = feedFuture{index: idx, future: l.tl.app.Add(l.tl.ctx, tessera.NewEntry(leaf))}
				if chunk == nil {
					chunk = make([]feedFuture, 0, feedYield)
				}
				chunk = append(chunk, last)
				next = idx + 1
				if added++; added%feedYield != 0 {
					continue
				}
				l.futures <- chunk
				chunk = nil
				// A round of a quarter second's leaves is a millisecond or
				// more of Adds: with one P, the requests waiting behind it
				// get their turn every feedYield leaves, while the round is
				// young. Past half of tessera's flush age the rest goes in
				// one stretch, so that tessera takes the round as one batch:
				// at saturation a yield waits for every runnable request,
				// and rounds of 2,000 leaves took 16-111 ms to add, split
				// into batches that each cost tessera's fixed round of
				// writes. That stretch is a few ms, at saturation only.
				if time.Since(adding) < roundFlush/2 {
					background.Yield()
				}
			}
		}
		if chunk != nil {
			l.futures <- chunk
		}
		if last.future == nil {
			continue // every leaf of the round was re-added by recoverLog
		}
		// Futures are memoized: the resolver gets the same answer. The
		// last one is at its index only if every batch before it was.
		err := checkFuture(last)
		integrated = time.Now()
		if err != nil {
			barrier := make(chan struct{})
			l.futures <- []feedFuture{{barrier: barrier}}
			<-barrier // the resolver has seen the failure and stopped
			l.failed.CompareAndSwap(nil, &err)
			if next, ok = l.recoverLog(); !ok {
				return
			}
		}
	}
}

// gather adds to round what the journal hands over within wait, and
// returns sooner when the ledger closes (the feed is closed: the next
// receive says so).
func (l *Log) gather(round []feedBatch, wait time.Duration) []feedBatch {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return round
		case b, ok := <-l.feed:
			if !ok {
				return round
			}
			round = append(round, b)
		}
	}
}

// resolveLoop waits for tessera to integrate each leaf, in order.
func (l *Log) resolveLoop() {
	defer close(l.resolved)
	for chunk := range l.futures {
		for _, f := range chunk {
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
}
