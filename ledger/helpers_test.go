package ledger

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/verify"
)

// openTest opens a ledger in a temporary directory with a short
// checkpoint interval, closed at the end of the test.
func openTest(t testing.TB, dir string) *Log {
	t.Helper()
	l, err := Open(context.Background(), Config{Dir: dir, Origin: "test.custody/log", CheckpointInterval: 100 * time.Millisecond, JournalSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// sampleTx is a transaction with every field set; its commitments are to
// request and response under l's salts.
func sampleTx(l *Log, id string, request, response []byte) *custody.Transaction {
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
	tx.Verdict = custody.Verified
	return tx
}

// appendN appends n transactions and returns their receipts, requests and
// responses.
func appendN(t testing.TB, l *Log, n int) (rs []*verify.Receipt, reqs, resps [][]byte) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		req := fmt.Appendf(nil, `{"model":"glm-5.3","messages":[{"role":"user","content":"prompt %d"}]}`, i)
		resp := fmt.Appendf(nil, "data: {\"id\":\"chatcmpl-%d\"}\n\ndata: [DONE]\n\n", i)
		r, err := l.Append(context.Background(), sampleTx(l, id, req, resp))
		if err != nil {
			t.Fatal(err)
		}
		rs, reqs, resps = append(rs, r), append(reqs, req), append(resps, resp)
	}
	return rs, reqs, resps
}

// integrated waits until a published checkpoint covers index and returns
// the receipt with its proof.
func integrated(t testing.TB, l *Log, index uint64, id string) *verify.Receipt {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := l.Receipt(context.Background(), index, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Checkpoint != "" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaf %d not integrated after 10s", index)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// closedLog is a closed ledger of n leaves in a temporary directory, with
// their receipts.
func closedLog(t testing.TB, n int) (string, *Log, []*verify.Receipt) {
	t.Helper()
	dir := t.TempDir()
	l := openTest(t, dir)
	rs, _, _ := appendN(t, l, n)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, l, rs
}
