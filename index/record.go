package index

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/custody-gateway/custody"
)

// Record is one transaction as indexed: the transaction and where in the
// ledger it lives.
type Record struct {
	custody.Transaction
	Shard     string `json:"shard"`      // log origin of the replica that wrote it
	LeafIndex int64  `json:"leaf_index"` // index in that shard's log; -1 if not (yet) known
}

// Codes returns the codes a record is found by in a Query on Code:
// Transaction.Codes.
func Codes(t *custody.Transaction) []custody.Code { return t.Codes() }

// Terms are what a record is found by in a Query on Code or Model, each
// once: CodeTerm of every code in Codes, and ModelTerm of the requested
// and the response model. Backends keep them in one table ordered by
// (term, time, request id), so a search by code or by model reads one
// index range in newest-first order instead of sorting every match.
func Terms(t *custody.Transaction) []string {
	var ts []string
	for _, c := range Codes(t) {
		ts = append(ts, CodeTerm(c))
	}
	if t.RequestedModel != "" {
		ts = append(ts, ModelTerm(t.RequestedModel))
	}
	if t.ResponseModel != "" && t.ResponseModel != t.RequestedModel {
		ts = append(ts, ModelTerm(t.ResponseModel))
	}
	if t.Sender == custody.SenderEval {
		ts = append(ts, SenderTerm(custody.SenderEval))
	}
	return ts
}

// CodeTerm is the term of a code (see Terms).
func CodeTerm(c custody.Code) string { return Column("code:" + string(c)) }

// SenderTerm is the term of an eval's traffic (see Terms): the one sender
// a record's columns do not tell (a client's is not canary traffic, a
// canary probe's is canary traffic without this term).
func SenderTerm(o custody.Sender) string { return Column("sender:" + string(o)) }

// ModelTerm is the term of a model name (see Terms).
func ModelTerm(m string) string { return Column("model:" + m) }

// Validate reports whether r can be stored.
func (r *Record) Validate() error {
	if r.ID == "" {
		return fmt.Errorf("index: record without request id: %w", custody.ErrInvalidRequest)
	}
	if r.LeafIndex < -1 {
		return fmt.Errorf("index: record %q: leaf index %d: %w", r.ID, r.LeafIndex, custody.ErrInvalidRequest)
	}
	return nil
}

// EncodeTransaction is the form in which backends store a transaction:
// its ledger JSON. Indexed fields are also kept in columns of their own.
func EncodeTransaction(t *custody.Transaction) ([]byte, error) {
	if b, ok := appendTransaction(make([]byte, 0, 1024), t); ok {
		return b, nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("index: encoding %q: %w", t.ID, err)
	}
	return b, nil
}

// EncodeTransactionString is EncodeTransaction as a string, for a
// backend that binds the data column as text: the bytes are this call's
// own new buffer, never written again, so the string is made without
// copying them (a kilobyte a record).
func EncodeTransactionString(t *custody.Transaction) (string, error) {
	b, err := EncodeTransaction(t)
	if err != nil || len(b) == 0 {
		return "", err
	}
	return unsafe.String(&b[0], len(b)), nil
}

// DecodeRecord rebuilds a Record from what EncodeTransaction stored. Times
// come back in UTC.
func DecodeRecord(data []byte, shard string, leafIndex int64) (Record, error) {
	r := Record{Shard: shard, LeafIndex: leafIndex}
	if err := json.Unmarshal(data, &r.Transaction); err != nil {
		return Record{}, fmt.Errorf("index: decoding stored record: %w", err)
	}
	r.Time = r.Time.UTC()
	return r, nil
}

// Column is s as stored in a searchable text column: valid UTF-8 without
// NUL bytes, which postgres refuses in text. A model name reported by an
// upstream is untrusted and may hold either; such a record must still be
// indexed (its JSON keeps the value escaped), it is only found by the
// cleaned value.
func Column(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
