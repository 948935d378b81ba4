package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
)

// streamDigest is the digest of a stream's content as custody read it:
// each event's data, length-prefixed, in order. A stream with no id has
// nothing else the replay check can hold it by: it claims this at its end
// (check.StreamClaim), so that the same stream delivered to a second
// request is a replay, as the same plain body is.
type streamDigest struct{ h hash.Hash }

func newStreamDigest() *streamDigest { return &streamDigest{h: sha256.New()} }

func (d *streamDigest) add(data []byte) {
	var n [binary.MaxVarintLen64]byte
	d.h.Write(n[:binary.PutUvarint(n[:], uint64(len(data)))])
	d.h.Write(data)
}

// checkStreamReplay runs the replay check of a stream that had no id
// (checkReplay left it to the end): its content digest is claimed for the
// request it answered. A stream with an id was checked at its first event.
func (x *exchange) checkStreamReplay(rt route, d *streamDigest) {
	if !x.g.checks.runs(custody.CheckReplay) || x.tx.ResponseID != "" {
		return
	}
	var sum [32]byte
	d.h.Sum(sum[:0])
	c := check.StreamClaim(x.wreq.Digest(rt.cfg.Model), sum)
	err := x.g.replay.Claim(c.Key, c.Owner, x.g.now())
	if err == nil && x.g.sharedReplay != nil {
		if err = x.claimShared([]check.ReplayClaim{c}); errorsIsIndexDown(err) {
			if x.g.cfg.Checks.OnIndexUnavailable == "reject" {
				x.tx.Fail(custody.CheckReplay, custody.CodeIndexUnavailable, indexDownMessage)
				return
			}
			x.tx.Flag(custody.CheckReplay, custody.CodeIndexUnavailable, "index unavailable")
			return
		}
	}
	x.verdictOf(err, custody.CheckReplay)
}
