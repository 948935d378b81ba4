package openai

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"slices"
	"sync"

	"github.com/custody-gateway/custody/internal/jsonscan"
)

// Digest is the SHA-256 of the request as the upstream receives it (with
// model replaced by upstreamModel, as Rewrite does) in a canonical form:
// what it says, not how it is spelled. Member order, whitespace and string
// escapes do not change it; the top-level user and metadata members,
// which name the caller rather than the question, are left out. Two
// tenants asking the same thing get the same digest (see
// check.AppendResponseClaims). Numbers are taken as written.
//
// It walks the body once and hashes as it goes: no decode, no copy.
func (r *Request) Digest(upstreamModel string) [32]byte {
	c := canons.Get().(*canon)
	defer canons.Put(c)
	c.h.Reset()
	c.w.Reset(c.h)
	c.object(r.Body, jsonscan.Space(r.Body, 0), true, upstreamModel)
	c.w.Flush()
	c.h.Sum(c.sum[:0]) // into the pooled canon: a local array would escape through the interface
	return c.sum
}

// canons keeps canon's hash and buffer between digests: every request
// of the replay check takes one, and making them was three allocations.
var canons = sync.Pool{New: func() any {
	h := sha256.New()
	return &canon{h: h, w: bufio.NewWriterSize(h, 512)}
}}

// canon writes a JSON value to h as a tagged, length-prefixed encoding:
// 'o' count (key value)... with keys sorted, 'a' count value..., 's'
// string, 'n' number or literal.
type canon struct {
	// w gathers the encoding for the hash: it is dozens of tags and short
	// strings, and a Write through hash.Hash for each cost more than
	// hashing them.
	w   *bufio.Writer
	h   hash.Hash                       // w's destination
	sum [sha256.Size]byte               // h's sum
	buf [binary.MaxVarintLen64 + 1]byte // a tag (here, not on the stack: it would escape through w.Write)
}

type canonMember struct {
	key    []byte
	vs, ve int
}

func (c *canon) tag(t byte, n int) {
	c.buf[0] = t
	c.w.Write(binary.AppendUvarint(c.buf[:1], uint64(n)))
}

func (c *canon) bytes(t byte, b []byte) {
	c.tag(t, len(b))
	c.w.Write(b)
}

func (c *canon) value(b []byte, i int) {
	switch b[i] {
	case '{':
		c.object(b, i, false, "")
	case '[':
		n := 0
		eachElement(b, i, func(int, int) error { n++; return nil })
		c.tag('a', n)
		eachElement(b, i, func(_, vs int) error { c.value(b, vs); return nil })
	case '"':
		c.bytes('s', unquote(b[i:jsonscan.String(b, i)]))
	default:
		c.bytes('n', b[i:jsonscan.Value(b, i)])
	}
}

func (c *canon) object(b []byte, i int, top bool, model string) {
	if i >= len(b) || b[i] != '{' {
		c.bytes('n', b) // not an object: as it is
		return
	}
	var small [8]canonMember // most objects: no allocation for their members
	ms := small[:0]
	eachMember(b, i, func(raw []byte, vs, ve int) error {
		key := raw
		if bytes.IndexByte(raw, '\\') >= 0 {
			key = unquote(append(append([]byte{'"'}, raw...), '"'))
		}
		if top && (string(key) == "user" || string(key) == "metadata") {
			return nil
		}
		ms = append(ms, canonMember{key, vs, ve})
		return nil
	})
	slices.SortStableFunc(ms, func(x, y canonMember) int { return bytes.Compare(x.key, y.key) })
	c.tag('o', len(ms))
	for _, m := range ms {
		c.bytes('k', m.key)
		if top && string(m.key) == "model" {
			c.bytes('s', []byte(model))
			continue
		}
		c.value(b, m.vs)
	}
}

// unquote returns the content of a JSON string token (quotes included in
// q): the bytes themselves when there is no escape.
func unquote(q []byte) []byte {
	if bytes.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return q
	}
	return []byte(s)
}
