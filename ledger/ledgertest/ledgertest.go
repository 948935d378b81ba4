// Package ledgertest makes small real logs with the ledger engine, for the
// tests of what reads them: package verify and the custody command's
// scripts. Its functions return errors instead of taking a testing.TB, so
// that a testscript command can use them too.
package ledgertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/verify"
)

// Origin is the origin of the logs Open makes.
const Origin = "test.custody/log"

// Open opens a ledger in dir with a short checkpoint interval and small
// journal segments. The caller closes it.
func Open(ctx context.Context, dir string) (*ledger.Log, error) {
	return ledger.Open(ctx, ledger.Config{Dir: dir, Origin: Origin, CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
}

// SampleTx is a transaction with every field set; its commitments are to
// request and response under l's salts.
func SampleTx(l *ledger.Log, id string, request, response []byte) *custody.Transaction {
	rs, ps := l.Salts(id)
	tx := &custody.Transaction{
		ID: id, Tenant: "acme", Time: time.Date(2026, 11, 30, 1, 2, 3, 456789000, time.UTC),
		Endpoint: "chat.completions", Stream: true, RequestedModel: "glm-5.3",
		Provider: "primary", Region: "eu-west-1", UpstreamModel: "glm-5.3-0827", ResponseModel: "glm-5.3-0827",
		Fingerprint: "fp_1", ResponseID: "chatcmpl-1", Route: 0, FallbackChain: []string{"primary"},
		Policy: "default", UseCase: "code-generation", Decision: "primary",
		Status: 200, PromptTokensLocal: 12, PromptTokensReported: 14, CompletionTokens: 7,
		RequestCommitment: verify.Commit(rs, request), ResponseCommitment: verify.Commit(ps, response),
		Duration: 1500 * time.Microsecond,
	}
	tx.Pass(custody.CheckPromptTokens, "12<=14<=84")
	tx.Pass(custody.CheckModel, "")
	tx.Conclude()
	return tx
}

// Sample is one appended transaction: its receipt as Append returned it
// (no proof yet) and the bytes its commitments open to.
type Sample struct {
	Receipt           *verify.Receipt
	Request, Response []byte
}

// Append appends n transactions "req-0" ... "req-<n-1>" with distinct
// request and response bodies (a response is an SSE stream).
func Append(ctx context.Context, l *ledger.Log, n int) ([]Sample, error) {
	var out []Sample
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		req := fmt.Appendf(nil, `{"model":"glm-5.3","messages":[{"role":"user","content":"prompt %d"}]}`, i)
		resp := fmt.Appendf(nil, "data: {\"id\":\"chatcmpl-%d\"}\n\ndata: [DONE]\n\n", i)
		r, err := l.Append(ctx, SampleTx(l, id, req, resp))
		if err != nil {
			return nil, err
		}
		out = append(out, Sample{Receipt: r, Request: req, Response: resp})
	}
	return out, nil
}

// Integrated waits (at most 10 s) until a published checkpoint covers
// index and returns the receipt of id with its inclusion proof.
func Integrated(ctx context.Context, l *ledger.Log, index uint64, id string) (*verify.Receipt, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := l.Receipt(ctx, index, id)
		if err != nil {
			return nil, err
		}
		if r.Checkpoint != "" {
			return r, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("leaf %d not integrated after 10s", index)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CopyKeys copies the ledger secret and signing key of the ledger in from
// to the (new) ledger directory to: a log opened there is signed by the
// same key, as a dishonest operator's rewritten log would be.
func CopyKeys(from, to string) error {
	for _, f := range []string{"secret.key", "signing.key"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
