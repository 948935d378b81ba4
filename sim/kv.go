package sim

import (
	"errors"
	"sync"
)

// Errors of the KV pool. The server maps errKVForeignPage to a 500 and
// errKVExhausted to a 503.
var (
	errKVExhausted   = errors.New("kv pool exhausted")
	errKVForeignPage = errors.New("kv page not owned by this request")
)

// owner identifies the request that may read a page: the request's
// sequence number inside this server and its tenant.
type owner struct {
	req    uint64
	tenant string
}

// pageTag is written into a page by the prefill that fills it, only when
// ownership tags are on. gen is the pool-wide write generation: a page
// refilled by a later request gets a new gen, so a page table entry that
// outlived its page is recognised even if the same request id recurred.
type pageTag struct {
	req    uint64
	tenant string
	gen    uint64
}

// page holds up to pageTokens words of one sequence. Freeing a page does
// not clear it: words and tag stay until the next prefill overwrites them.
type page struct {
	words []string
	tag   pageTag
}

// pageRef is one entry of a page table handed from prefill to decode.
type pageRef struct {
	idx int32
	gen uint64
}

// kvPool is a paged KV pool shared by all requests. Free pages form a FIFO
// queue: prefill takes the least recently freed pages, so the most recently
// freed ones, the pages a faulty decode reads, keep their contents longest.
type kvPool struct {
	pageTokens int
	tags       bool

	mu    sync.Mutex
	pages []page  // guarded by mu
	free  []int32 // ring of free page indices, guarded by mu
	head  int     // index in free of the oldest free page, guarded by mu
	nfree int     // guarded by mu
	gen   uint64  // last generation written, guarded by mu
}

func newKVPool(pages, pageTokens int, tags bool) *kvPool {
	p := &kvPool{
		pageTokens: pageTokens,
		tags:       tags,
		pages:      make([]page, pages),
		free:       make([]int32, pages),
		nfree:      pages,
	}
	for i := range p.free {
		p.free[i] = int32(i)
		p.pages[i].words = make([]string, 0, pageTokens)
	}
	return p
}

// pagesFor is the number of pages n words occupy (at least one).
func (p *kvPool) pagesFor(n int) int {
	if n <= 0 {
		return 1
	}
	return (n + p.pageTokens - 1) / p.pageTokens
}

// prefill allocates pages for words, writes them (and, with tags, o's tag)
// and returns the page table.
func (p *kvPool) prefill(o owner, words []string) ([]pageRef, error) {
	n := p.pagesFor(len(words))
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > p.nfree {
		return nil, errKVExhausted
	}
	table := make([]pageRef, n)
	for i := range table {
		idx := p.free[p.head]
		p.head = (p.head + 1) % len(p.free)
		p.nfree--
		lo := min(i*p.pageTokens, len(words))
		hi := min(lo+p.pageTokens, len(words))
		pg := &p.pages[idx]
		pg.words = append(pg.words[:0], words[lo:hi]...)
		p.gen++
		if p.tags {
			pg.tag = pageTag{req: o.req, tenant: o.tenant, gen: p.gen}
		}
		table[i] = pageRef{idx: idx, gen: p.gen}
	}
	return table, nil
}

// stale returns up to n page table entries for the most recently freed
// pages that still hold words: what a decode gets when its page table
// points at memory the pool has already taken back. The entries carry the
// pages' current generation, so only the owner check can tell.
func (p *kvPool) stale(n int) []pageRef {
	p.mu.Lock()
	defer p.mu.Unlock()
	var refs []pageRef
	for k := p.nfree - 1; k >= 0 && len(refs) < n; k-- {
		idx := p.free[(p.head+k)%len(p.free)]
		pg := &p.pages[idx]
		if len(pg.words) == 0 {
			continue
		}
		gen := pg.tag.gen
		if !p.tags {
			gen = 0
		}
		refs = append(refs, pageRef{idx: idx, gen: gen})
	}
	return refs
}

// read appends to dst the words of the pages in table, in order. With
// ownership tags, a page whose tag is not (o, ref.gen) fails the whole read
// with errKVForeignPage and nothing is returned.
func (p *kvPool) read(dst []string, o owner, table []pageRef) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ref := range table {
		pg := &p.pages[ref.idx]
		if p.tags && (pg.tag.req != o.req || pg.tag.gen != ref.gen || pg.tag.tenant != o.tenant) {
			return dst[:0], errKVForeignPage
		}
		dst = append(dst, pg.words...)
	}
	return dst, nil
}

// release returns a request's own pages to the tail of the free queue,
// contents intact.
func (p *kvPool) release(table []pageRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ref := range table {
		p.free[(p.head+p.nfree)%len(p.free)] = ref.idx
		p.nfree++
	}
}
