package ledger

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestProbes: each probe keeps its schedule, gives one positive time a
// sync (ProbeDisk) or a request (ProbeCommits, in 1 to n commits),
// leaves nothing behind, and refuses bad arguments and a missing
// directory.
func TestProbes(t *testing.T) {
	probes := map[string]func(dir string, rate float64, n, size int) ([]time.Duration, int, error){
		"ProbeDisk": func(dir string, rate float64, n, size int) ([]time.Duration, int, error) {
			lat, err := ProbeDisk(context.Background(), dir, rate, n, size)
			return lat, len(lat), err
		},
		"ProbeCommits": func(dir string, rate float64, n, size int) ([]time.Duration, int, error) {
			return ProbeCommits(context.Background(), dir, rate, n, size)
		},
	}
	for name, probe := range probes {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			n, rate := 50, 500.0
			began := time.Now()
			lat, commits, err := probe(dir, rate, n, 1360)
			if err != nil {
				t.Fatal(err)
			}
			if took, want := time.Since(began), time.Duration(float64(n-1)/rate*float64(time.Second)); took < want {
				t.Errorf("%d at %g/s took %v, under the schedule's %v", n, rate, took, want)
			}
			if len(lat) != n || commits < 1 || commits > n {
				t.Fatalf("%d times in %d commits, want %d times in 1 to %[3]d", len(lat), commits, n)
			}
			for i, d := range lat {
				if d <= 0 {
					t.Errorf("time %d: %v", i, d)
				}
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("the probe left %d files in its directory", len(left))
			}
			for _, bad := range []struct {
				rate    float64
				n, size int
			}{{0, n, 1}, {rate, 0, 1}, {rate, n, 0}, {rate, n, probeFileBytes + 1}} {
				if _, _, err := probe(dir, bad.rate, bad.n, bad.size); err == nil {
					t.Errorf("rate %g, n %d, size %d: taken", bad.rate, bad.n, bad.size)
				}
			}
			if _, _, err := probe(dir+"/missing", rate, n, 1); err == nil {
				t.Error("a missing directory was taken")
			}
		})
	}
}

// TestGroupCommitsStall: while one commit stalls, the requests that
// arrive wait for it and then go in one commit together, and each one's
// time runs from its arrival, not from the start of the commit that
// took it (which would hide the stall, as a sync's own time does).
func TestGroupCommitsStall(t *testing.T) {
	const n, every, stall = 400, time.Millisecond, 50 * time.Millisecond
	start := time.Now().Add(time.Millisecond)
	var calls, stalledK int
	var stallEnd time.Time
	var sizes []int
	lat, commits, err := groupCommits(context.Background(), every, n, start, func(k int) error {
		calls++
		sizes = append(sizes, k)
		if calls == 10 {
			stalledK = k
			time.Sleep(stall)
			stallEnd = time.Now()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != n || commits != calls {
		t.Fatalf("%d times, %d commits (%d calls), want %d times", len(lat), commits, calls, n)
	}
	// The requests after the stalled commit's were scheduled no later
	// than its end if they arrived during it: each waited at least from
	// its arrival to the stall's end.
	before := 0
	for _, k := range sizes[:10] {
		before += k
	}
	waited := 0
	for i := before; i < n; i++ {
		arrival := start.Add(time.Duration(i) * every)
		if !arrival.Before(stallEnd) {
			break
		}
		waited++
		if min := stallEnd.Sub(arrival); lat[i] < min {
			t.Errorf("request %d arrived %v before the stall ended but took %v", i, min, lat[i])
		}
	}
	if waited < 20 {
		t.Errorf("%d requests arrived during a %v stall at one a %v, want 20 or more", waited, stall, every)
	}
	if sizes[10] < 20 {
		t.Errorf("the commit after the stall took %d requests, want the 20 or more that arrived during it (sizes %v, stalled %d)", sizes[10], sizes, stalledK)
	}
}
