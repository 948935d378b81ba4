package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"golang.org/x/mod/sumdb/note"
)

// ConfigLeafType is the "type" of a config leaf. Transaction leaves have
// no "type" field.
const ConfigLeafType = "config"

// configLeafPrefix starts every config leaf (its canonical encoding):
// how a reader tells one from a transaction leaf without decoding.
var configLeafPrefix = []byte(`{"v":1,"type":"config",`)

// ConfigLeaf records the rules in force: every config load and reload
// (and any admin change of behaviour) appends one, and every transaction
// leaf after it names its index (config_leaf), so that the log says under
// whose rules each transaction was decided. The field order here is the
// canonical encoding, as for transaction leaves; docs/ledger.md
// documents it.
type ConfigLeaf struct {
	V    int    `json:"v"`    // 1
	Type string `json:"type"` // "config"
	Time string `json:"time"` // RFC 3339, UTC, nanoseconds
	// Reason is what appended it: "start", "reload", ...
	Reason string `json:"reason"`
	// Version is custody's version ("dev" for a development build).
	Version string `json:"custody_version"`
	// Digest is hex SHA-256 of the effective config, secrets removed, in
	// canonical JSON: two gateways with equal digests ran the same config.
	Digest string `json:"config_digest"`
	// Policies are the policies in force, canonical JSON (keys sorted),
	// as configured (the YAML keys of `policies:`), by name.
	Policies json.RawMessage `json:"policies"`
	// Previous is the index of the config leaf before this one, -1 for
	// the log's first.
	Previous int64 `json:"previous_config_leaf"`
}

// ErrBadConfigLeaf is wrapped by every DecodeConfigLeaf failure.
var ErrBadConfigLeaf = errors.New("verify: malformed config leaf")

// IsConfigLeaf reports whether leaf is a config leaf (by its canonical
// prefix; DecodeConfigLeaf checks the rest).
func IsConfigLeaf(leaf []byte) bool { return bytes.HasPrefix(leaf, configLeafPrefix) }

// EncodeConfigLeaf returns the canonical encoding of c, with V, Type set
// and Policies compacted.
func EncodeConfigLeaf(c ConfigLeaf, t time.Time) ([]byte, error) {
	c.V, c.Type, c.Time = 1, ConfigLeafType, t.UTC().Format(time.RFC3339Nano)
	if len(c.Policies) == 0 {
		c.Policies = json.RawMessage("{}")
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encoding config leaf: %w", err)
	}
	if len(b) > MaxLeafSize {
		return nil, fmt.Errorf("encoding config leaf: %d bytes, limit %d", len(b), MaxLeafSize)
	}
	return b, nil
}

// DecodeConfigLeaf parses a config leaf in canonical form only.
func DecodeConfigLeaf(b []byte) (*ConfigLeaf, error) {
	var c ConfigLeaf
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfigLeaf, err)
	}
	if c.V != 1 || c.Type != ConfigLeafType || c.Previous < -1 {
		return nil, fmt.Errorf("%w: version %d, type %q, previous %d", ErrBadConfigLeaf, c.V, c.Type, c.Previous)
	}
	t, err := time.Parse(time.RFC3339Nano, c.Time)
	if err != nil {
		return nil, fmt.Errorf("%w: time: %w", ErrBadConfigLeaf, err)
	}
	again, err := EncodeConfigLeaf(c, t)
	if err != nil || !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: not in canonical form", ErrBadConfigLeaf)
	}
	return &c, nil
}

// Policy returns the named policy from the config leaf, canonical JSON.
func (c *ConfigLeaf) Policy(name string) (json.RawMessage, bool) {
	var ps map[string]json.RawMessage
	if json.Unmarshal(c.Policies, &ps) != nil {
		return nil, false
	}
	p, ok := ps[name]
	return p, ok
}

// configLeafOf reads the config_leaf index a transaction leaf names,
// without decoding it: the field is last but one in a version 2 or 3
// leaf. ok is false for a leaf that names none (version 1, or 3 without
// the field).
func configLeafOf(leaf []byte) (uint64, bool) {
	const key = `,"config_leaf":`
	if !bytes.HasPrefix(leaf, []byte(`{"v":2,`)) && !bytes.HasPrefix(leaf, []byte(`{"v":3,`)) {
		return 0, false
	}
	// Only "duration_ns" (at most 20 digits) follows: look at the tail.
	tail := leaf[max(0, len(leaf)-96):]
	i := bytes.LastIndex(tail, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := tail[i+len(key):]
	j := bytes.IndexByte(rest, ',')
	if j < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(rest[:j]), 10, 64)
	return n, err == nil
}

// configChain checks, leaf by leaf in log order, that config leaves form
// a chain (each names the one before it) and that every transaction leaf
// names a config leaf that precedes it.
type configChain struct {
	last    int64 // index of the last config leaf seen, -1 none
	indices map[uint64]bool
	count   int
}

func newConfigChain() *configChain { return &configChain{last: -1, indices: map[uint64]bool{}} }

func (c *configChain) leaf(index uint64, leaf []byte) error {
	if IsConfigLeaf(leaf) {
		cl, err := DecodeConfigLeaf(leaf)
		if err != nil {
			return invalid("config leaf %d: %v", index, err)
		}
		if cl.Previous != c.last {
			return invalid("config leaf %d names %d as the previous config leaf, but the last one before it is %d: the chain of rules is broken", index, cl.Previous, c.last)
		}
		c.last, c.indices[index] = int64(index), true
		c.count++
		return nil
	}
	if n, ok := configLeafOf(leaf); ok && (n >= index || !c.indices[n]) {
		return invalid("leaf %d names config leaf %d, which is not a config leaf before it", index, n)
	}
	return nil
}

// ReadConfigLeaf reads the config leaf at index from the log and proves
// it: its entry bundle holds it, and its inclusion proof leads to the
// root of the log's signed checkpoint. Refusals wrap ErrInvalid.
func ReadConfigLeaf(ctx context.Context, src LogSource, verifier note.Verifier, index uint64) (*ConfigLeaf, error) {
	cp, err := readCheckpoint(ctx, src, verifier)
	if err != nil {
		return nil, err
	}
	if index >= cp.Size {
		return nil, fmt.Errorf("%w: the log (size %d) does not contain config leaf %d yet", ErrNotIntegrated, cp.Size, index)
	}
	leaf, err := entryAt(ctx, src, index, cp.Size)
	if err != nil {
		return nil, err
	}
	incl, err := newProofs(src, cp.Size).inclusion(ctx, index)
	if err != nil {
		return nil, err
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, index, cp.Size, rfc6962.DefaultHasher.HashLeaf(leaf), incl, cp.Hash); err != nil {
		return nil, invalid("config leaf %d is not in the log: %v", index, err)
	}
	c, err := DecodeConfigLeaf(leaf)
	if err != nil {
		return nil, invalid("leaf %d: %v", index, err)
	}
	return c, nil
}

// entryAt reads the leaf at index from the entry bundles of a tree of
// size leaves (unproven: the caller proves it).
func entryAt(ctx context.Context, src LogSource, index, size uint64) ([]byte, error) {
	bi := index / layout.EntryBundleWidth
	raw, err := src.ReadEntryBundle(ctx, bi, layout.PartialTileSize(0, bi, size))
	if err != nil {
		return nil, fmt.Errorf("reading entry bundle: %w", err)
	}
	var eb api.EntryBundle
	if err := eb.UnmarshalText(raw); err != nil || uint64(len(eb.Entries)) <= index%layout.EntryBundleWidth {
		return nil, invalid("entry bundle %d does not hold leaf %d", bi, index)
	}
	return eb.Entries[index%layout.EntryBundleWidth], nil
}
