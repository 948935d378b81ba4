// Package heapfloor paces Go's garbage collector by a memory floor: the
// process may use floor bytes before the collector runs at all, and past
// it the heap may grow by percent of its live size between collections,
// as GOGC=percent would let it (Start's arguments).
//
// Go's GOGC alone sizes the collector's headroom to the live heap. Most of
// custody's live heap is tables of fixed size without pointers (the
// contamination sketch, the tokenizers' ranks), so GOGC both wastes the
// headroom they buy on a process that has memory to spare and, lowered
// to save that memory, collects more often than the request load needs.
// A soft memory limit (debug.SetMemoryLimit) with GOGC off gives the
// collector exactly the memory budget and no more, but a fixed limit
// under the live heap makes the collector run back to back (large bodies
// in flight, up to limits.max_inflight_bytes): the Pacer raises the limit
// after every collection to what percent would allow over the live heap
// it found, so past the floor the process behaves as under GOGC.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Pacer holds the collector to a floor and a percentage (see the package
// comment). Its zero value is not usable; Start makes one.
type Pacer struct {
	floor   int64
	percent int64

	mu      sync.Mutex // guards the fields below and the runtime's settings while running
	stopped bool
	samples []metrics.Sample
	limit   int64 // the memory limit last set

	// prevPercent and prevLimit are what Start found, for Stop.
	prevPercent int
	prevLimit   int64
}

// The runtime/metrics the limit is computed from: the live heap the last
// collection marked, and the memory the runtime holds apart from the heap
// (goroutine stacks, its own metadata), which the limit covers too.
var sampleNames = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

// Start turns GOGC off and sets the memory limit to floor, raised after
// every collection to what percent would allow over the live heap, until
// Stop. The runtime's settings before it are restored by Stop.
func Start(floor int64, percent int) *Pacer {
	p := &Pacer{floor: floor, percent: int64(percent)}
	for _, n := range sampleNames {
		p.samples = append(p.samples, metrics.Sample{Name: n})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prevPercent = debug.SetGCPercent(-1)
	p.prevLimit = debug.SetMemoryLimit(-1)
	p.adjustLocked()
	p.arm()
	return p
}

// Limit is the memory limit the Pacer last set.
func (p *Pacer) Limit() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limit
}

// Stop restores GOGC and the memory limit as Start found them; the limit
// is no longer adjusted.
func (p *Pacer) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	debug.SetMemoryLimit(p.prevLimit)
	debug.SetGCPercent(p.prevPercent)
}

// sentinel is an object nothing refers to: its cleanup runs once the
// collection that found it unreachable is over, which is how the Pacer
// learns of every collection. It holds a pointer so that the runtime
// gives it an allocation of its own (the tiny allocator packs small
// pointer-free objects together, and one of them alive keeps them all).
type sentinel struct{ _ *byte }

// arm registers the next collection's callback.
func (p *Pacer) arm() {
	runtime.AddCleanup(&sentinel{}, func(p *Pacer) { p.collected() }, p)
}

// collected runs after each collection: the limit follows the live heap,
// and the next collection is watched for.
func (p *Pacer) collected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.adjustLocked()
	p.arm()
}

// adjustLocked sets the memory limit to the floor or, when it is more,
// the live heap plus percent of it plus the runtime's memory apart from
// the heap.
func (p *Pacer) adjustLocked() {
	metrics.Read(p.samples)
	v := func(i int) int64 {
		if p.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(p.samples[i].Value.Uint64())
	}
	live := v(0)
	other := v(1) - v(2) - v(3) - v(4) - v(5)
	want := max(p.floor, other+live+live*p.percent/100)
	if want != p.limit {
		debug.SetMemoryLimit(want)
		p.limit = want
	}
}
