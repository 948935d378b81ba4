package recorder

import (
	"fmt"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func queued(id string, leaf int64) *index.Record {
	return &index.Record{Transaction: custody.Transaction{ID: id}, LeafIndex: leaf}
}

// The queue answers for a record from push until done, kicks the indexer
// only when a record finds it empty, and drops beyond queueSize.
func TestQueue(t *testing.T) {
	q := newQueue()
	if !q.push(queued("a", 1)) || !q.push(queued("b", 2)) {
		t.Fatal("push refused")
	}
	if len(q.kick) != 1 {
		t.Fatalf("kicks = %d, want 1 (the first record only)", len(q.kick))
	}
	<-q.kick
	batch := q.take(nil)
	if len(batch) != 2 || batch[0].ID != "a" || batch[1].ID != "b" || len(q.waiting) != 0 {
		t.Fatalf("take = %v", batch)
	}
	if _, ok := q.lookup("a"); !ok {
		t.Fatal("a record being written is not answered for")
	}
	// Another leaf of request a arrives while the first is written: done
	// of the first must not forget the second.
	q.push(queued("a", 3))
	if len(q.kick) != 1 {
		t.Fatal("a record finding the queue empty did not kick")
	}
	q.done(batch)
	if r, ok := q.lookup("a"); !ok || r.LeafIndex != 3 {
		t.Fatalf("lookup a = %v %v, want leaf 3", r, ok)
	}
	if _, ok := q.lookup("b"); ok {
		t.Fatal("b is answered for after done")
	}
	q.done(q.take(nil))
	for i := range queueSize {
		if !q.push(queued(fmt.Sprint(i), int64(i))) {
			t.Fatalf("push %d refused under queueSize", i)
		}
	}
	if q.push(queued("over", 1<<20)) {
		t.Fatal("push beyond queueSize accepted")
	}
}
