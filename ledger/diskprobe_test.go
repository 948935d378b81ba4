package ledger

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestProbeDisk: the probe keeps its schedule, times every sync, and
// leaves nothing behind.
func TestProbeDisk(t *testing.T) {
	dir := t.TempDir()
	const n, rate = 40, 400.0
	began := time.Now()
	lat, err := ProbeDisk(context.Background(), dir, rate, n, 1360)
	if err != nil {
		t.Fatal(err)
	}
	if took, want := time.Since(began), time.Duration(float64(n-1)/rate*float64(time.Second)); took < want {
		t.Errorf("%d syncs at %g/s took %v, under the schedule's %v", n, rate, took, want)
	}
	if len(lat) != n {
		t.Fatalf("%d times, want %d", len(lat), n)
	}
	for i, d := range lat {
		if d <= 0 {
			t.Errorf("sync %d: %v", i, d)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the probe left %d files in its directory", len(left))
	}
	for _, bad := range []struct {
		rate    float64
		n, size int
	}{{0, n, 1}, {rate, 0, 1}, {rate, n, 0}, {rate, n, probeFileBytes + 1}} {
		if _, err := ProbeDisk(context.Background(), dir, bad.rate, bad.n, bad.size); err == nil {
			t.Errorf("rate %g, n %d, size %d: taken", bad.rate, bad.n, bad.size)
		}
	}
	if _, err := ProbeDisk(context.Background(), dir+"/missing", rate, n, 1); err == nil {
		t.Error("a missing directory was taken")
	}
}
