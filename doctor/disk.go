package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/custody-gateway/custody/ledger"
)

// CheckDisk times the journal's commit on the disk under data_dir.
const CheckDisk = "ledger_disk"

// The probe: as many commits as a gateway at 1,000 req/s makes in half a
// second (about one each), of a one-transaction journal record.
const (
	diskRate  = 1000
	diskN     = 500
	diskBytes = 1360
)

// A commit slower than this at p50 is worth a warning: docs/BENCHMARKS.md's latency targets counts on
// about 0.1 ms, a local SSD does 0.05–0.3 ms, and a network or spinning
// disk takes milliseconds, which every non-streaming answer then waits.
const diskSlowP50 = time.Millisecond

// Disk probes the filesystem of dataDir as the ledger's journal uses it
// (ledger.ProbeDisk), or, if dataDir does not exist yet, that of the
// nearest directory above it, where serve will create it.
func Disk(ctx context.Context, dataDir string) Finding {
	where, err := existingDir(dataDir)
	if err == nil {
		var lat []time.Duration
		if lat, err = ledger.ProbeDisk(ctx, where, diskRate, diskN, diskBytes); err == nil {
			if abs, _ := filepath.Abs(dataDir); abs != where {
				where += fmt.Sprintf(" (data_dir %s does not exist yet; serve creates it there)", dataDir)
			}
			return diskFinding(where, lat)
		}
	}
	return Finding{Check: CheckDisk, Status: Problem,
		Detail: fmt.Sprintf("serve cannot keep its ledger under data_dir %s: %v", dataDir, err),
		Fix:    "set data_dir to a writable directory on a local disk"}
}

// existingDir is dir if it exists, else the nearest directory above it;
// an error if the first thing that exists on the way up is not a
// directory.
func existingDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for p := abs; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("%s is not a directory", p)
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		case filepath.Dir(p) == p:
			return "", err
		}
	}
}

// diskFinding judges the probe's times in where.
func diskFinding(where string, lat []time.Duration) Finding {
	s := slices.Clone(lat)
	slices.Sort(s)
	p50, p99 := s[(len(s)-1)/2], s[(len(s)-1)*99/100]
	f := Finding{Check: CheckDisk, Status: OK,
		Detail: fmt.Sprintf("a journal commit (write + fdatasync) in %s takes %.2f ms at p50, %.2f ms at p99, at %d commits/s: every non-streaming answer waits for one",
			where, ms(p50), ms(p99), diskRate)}
	if p50 > diskSlowP50 {
		f.Status = Warn
		f.Fix = "put data_dir on a local SSD, ideally one with power-loss protection (no volatile cache to flush): this disk adds its commit time to every answer"
	}
	return f
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
