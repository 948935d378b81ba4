package contamination

import (
	"slices"
)

// Prints are the keyed fingerprints of one prompt, from Detector.Fingerprint.
// They hold hashes only, never text, and mean nothing without the Detector's
// key. A nil *Prints is an empty prompt.
type Prints struct {
	all []uint64 // every k-gram hash, sorted, unique: exempts the own prompt
	sel []uint64 // winnowed and capped, sorted, unique: what Remember keeps
}

// Len is the number of fingerprints Remember would keep.
func (p *Prints) Len() int {
	if p == nil {
		return 0
	}
	return len(p.sel)
}

// has reports whether the prompt contains the k-gram with hash g.
func (p *Prints) has(g uint64) bool {
	if p == nil {
		return false
	}
	_, ok := slices.BinarySearch(p.all, g)
	return ok
}

// gram folds k word hashes (oldest first) into a k-gram hash. The word
// hashes are already keyed SipHash outputs, so an unkeyed but
// order-sensitive mix suffices.
func gram(words []uint64) uint64 {
	g := uint64(len(words))
	for _, w := range words {
		g = mix64(g ^ w)
	}
	return g
}

// mix64 is the murmur3 finaliser: a bijection that spreads every input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// fingerprintPiece is how many bytes of a prompt Fingerprint normalises
// at a time.
const fingerprintPiece = 512

// Fingerprint normalises prompt, hashes its word k-grams with the
// Detector's key and winnows them. Prompts shorter than K words have no
// fingerprints.
func (d *Detector) Fingerprint(prompt string) *Prints {
	n := newNormalizer(d.k0, d.k1)
	words := make([]uint64, 0, len(prompt)/5+1)
	// Feed in pieces so that a string is never copied whole to []byte.
	// The piece is small because gateways fingerprint each prompt on a
	// goroutine of its own, which starts with a small stack: a 4 KiB
	// buffer made every one of them grow its stack by copying (0.8 % of
	// serve's CPU at one-core saturation, docs/BENCHMARKS.md).
	var buf [fingerprintPiece]byte
	for s := prompt; len(s) > 0; {
		m := copy(buf[:], s)
		s = s[m:]
		n.feed(buf[:m], &words, nil)
	}
	n.finish(&words, nil)
	return d.printsOf(words)
}

// nonceDomain separates the fingerprint of a nonce-like word from the
// k-gram hashes.
const nonceDomain = 0x6e6f6e63655f6670

// nonceFP is the fingerprint of one nonce-like word (see isNonceHash).
func nonceFP(w uint64) uint64 { return mix64(w ^ nonceDomain) }

// printsOf builds the Prints of a prompt from its word hashes: its k-grams,
// winnowed, and every nonce-like word, which is rare enough to be a
// fingerprint alone.
func (d *Detector) printsOf(words []uint64) *Prints {
	k, max := d.cfg.K, d.cfg.MaxPrintsPerPrompt
	var nonces []uint64
	for _, w := range words {
		if isNonceHash(w) {
			nonces = append(nonces, nonceFP(w))
		}
	}
	var grams []uint64
	if len(words) >= k {
		grams = make([]uint64, len(words)-k+1, len(words)-k+1+len(nonces))
		for i := range grams {
			grams[i] = gram(words[i : i+k])
		}
	}
	sel := winnow(grams, d.cfg.Window)
	// Nonces first: they are the strongest evidence a prompt has.
	nonces = nonces[:min(len(nonces), max)]
	sel = append(nonces, capBlocks(sel, max-len(nonces))...)
	slices.Sort(sel)
	sel = slices.Compact(sel)
	grams = append(grams, nonces...)
	slices.Sort(grams)
	grams = slices.Compact(grams)
	return &Prints{all: slices.Clip(grams), sel: slices.Clip(sel)}
}

// winnow returns, in text order, the fingerprints robust winnowing selects
// from hashes (Schleimer, Wilkerson, Aiken 2003): in every window of w
// consecutive hashes the minimum (the rightmost on ties), each selected
// position recorded once. Every w consecutive k-grams hold a selected one,
// which is the guarantee the run rule of the Scanner relies on.
func winnow(hashes []uint64, w int) []uint64 {
	if len(hashes) == 0 {
		return nil
	}
	if w > len(hashes) {
		w = len(hashes)
	}
	out := make([]uint64, 0, 2*len(hashes)/(w+1)+1)
	last := -1
	for start := 0; start+w <= len(hashes); start++ {
		j := start
		if last >= start {
			// The previous minimum is still in the window: only the new
			// hash can displace it.
			j = last
			if end := start + w - 1; hashes[end] <= hashes[j] {
				j = end
			}
		} else {
			for i := start + 1; i < start+w; i++ {
				if hashes[i] <= hashes[j] {
					j = i
				}
			}
		}
		if j != last {
			out = append(out, hashes[j])
			last = j
		}
	}
	return out
}

// printBlock is the run of consecutive fingerprints kept together when a
// prompt is capped, so that a leak inside a kept block still forms a run.
const printBlock = 64

// capBlocks keeps at most max of sel, as evenly spaced blocks of
// printBlock consecutive fingerprints.
func capBlocks(sel []uint64, max int) []uint64 {
	if len(sel) <= max {
		return sel
	}
	if max <= 0 {
		return nil
	}
	blocks := (len(sel) + printBlock - 1) / printBlock
	keep := max / printBlock
	if keep == 0 {
		return sel[:max]
	}
	out := make([]uint64, 0, keep*printBlock)
	for i := 0; i < keep; i++ {
		b := i * blocks / keep
		end := min((b+1)*printBlock, len(sel))
		out = append(out, sel[b*printBlock:end]...)
	}
	return out
}
