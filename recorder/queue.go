package recorder

import (
	"sync"

	"github.com/custody-gateway/custody/index"
)

// queue holds the records that are durable in the log but not yet in the
// index: those waiting for the next batch and those being written. The
// request path appends under a mutex and never wakes the indexer per
// record: only a record that finds the queue empty kicks it, and the
// indexer then lingers and takes everything queued at once. (A channel of
// records woke the indexing goroutine for every transaction, a scheduler
// round trip each, and preallocated its whole capacity.)
type queue struct {
	mu      sync.Mutex
	waiting []*index.Record          // arrival order, not yet taken
	byID    map[string]*index.Record // waiting and being written: what Lookup answers from memory
	kick    chan struct{}            // one slot: records arrived to an empty queue
}

func newQueue() *queue {
	return &queue{byID: map[string]*index.Record{}, kick: make(chan struct{}, 1)}
}

// push adds rec unless queueSize records are outstanding already; false
// means it was dropped (reconciliation indexes it from the log later).
func (q *queue) push(rec *index.Record) bool {
	q.mu.Lock()
	if len(q.byID) >= queueSize {
		q.mu.Unlock()
		return false
	}
	q.waiting = append(q.waiting, rec)
	q.byID[rec.ID] = rec
	first := len(q.waiting) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// take moves every waiting record into dst (reused), in arrival order;
// they stay answerable by lookup until done.
func (q *queue) take(dst []index.Record) []index.Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, rec := range q.waiting {
		dst = append(dst, *rec)
		q.waiting[i] = nil
	}
	q.waiting = q.waiting[:0]
	return dst
}

// done forgets recs, which the index now answers for (or reconciliation
// will).
func (q *queue) done(recs []index.Record) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range recs {
		// A later record of the same request id (another attempt's leaf)
		// may have replaced this one: forget only what was written.
		if r, ok := q.byID[recs[i].ID]; ok && r.LeafIndex == recs[i].LeafIndex {
			delete(q.byID, recs[i].ID)
		}
	}
}

// lookup returns the outstanding record of request id.
func (q *queue) lookup(id string) (index.Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r, ok := q.byID[id]; ok {
		return *r, true
	}
	return index.Record{}, false
}
