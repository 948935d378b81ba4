package sqlite

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// BenchmarkPutCPU is the index's write path as the recorder drives it:
// batches of 16 to 1,024 records (its 50 ms linger collects 50 at 1,000
// transactions/s, 250 at 5,000), of records like the gateway's (32-byte commitments,
// every check's outcome). It reports CPU per record (user+system time
// of the process over the run, which a busy machine slows but does not
// inflate the way it does wall time).
//
// stored=whole is an index opened without the log; stored=in-log one on
// a log that has every leaf (OpenWithLog), as serve runs it.
func BenchmarkPutCPU(b *testing.B) {
	for _, stored := range []string{"whole", "in-log"} {
		for _, batch := range []int{16, 256, 1024} {
			b.Run(fmt.Sprintf("stored=%s/batch=%d", stored, batch), func(b *testing.B) {
				benchmarkPut(b, stored == "in-log", batch)
			})
		}
	}
}

// everyLeaf is a log that has integrated every leaf of the benchmark's
// shard: Put never reads it.
type everyLeaf struct{}

func (everyLeaf) Origin() string  { return "custody.local/log" }
func (everyLeaf) Has(uint64) bool { return true }
func (everyLeaf) Transactions(context.Context, []uint64) ([]*custody.Transaction, error) {
	return nil, errors.New("not read by Put")
}

func benchmarkPut(b *testing.B, inLog bool, batch int) {
	var log index.Leaves
	if inLog {
		log = everyLeaf{}
	}
	x, err := OpenWithLog(b.Context(), fresh(b), log)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	recs := make([]index.Record, batch)
	n := 0
	cpu0 := processCPU()
	for b.Loop() {
		for i := range recs {
			recs[i] = gatewayRecord(n)
			n++
		}
		if err := x.Put(b.Context(), recs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/record")
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func gatewayRecord(n int) index.Record {
	tx := custody.Transaction{
		ID: fmt.Sprintf("cust-%016x", n), Tenant: "bench", Time: time.Unix(1_800_000_000, int64(n)*1000),
		Endpoint: "chat.completions", RequestedModel: "sim-1", Provider: "sim", UpstreamModel: "sim-1",
		ResponseModel: "sim-1", ResponseID: fmt.Sprintf("chatcmpl-%d", n), FallbackChain: []string{"sim"},
		Policy: "default", Status: 200, PromptTokensLocal: 40, PromptTokensReported: 41, CompletionTokens: 16,
		Verdict: custody.Verified, RequestCommitment: make([]byte, 32), ResponseCommitment: make([]byte, 32), Duration: time.Millisecond,
	}
	rand.Read(tx.RequestCommitment)
	rand.Read(tx.ResponseCommitment)
	for _, c := range []string{custody.CheckPromptTokens, custody.CheckModel, custody.CheckRequestID, custody.CheckReplay} {
		tx.Pass(c, "ok")
	}
	return index.Record{Transaction: tx, Shard: "custody.local/log", LeafIndex: int64(n)}
}
