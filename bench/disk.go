package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/custody-gateway/custody/ledger"
)

// The disk alone: what the device under F's data directory makes a
// request wait for when nothing but a group commit runs on it
// (ledger.ProbeCommits): the open loop's requests, arriving as it sends
// them, each committed with the others that arrived meanwhile in one
// write and one fdatasync of a preallocated file, and timed from its
// arrival. It runs in a process of its own on the target's CPUs, after
// each round. F acknowledges a leaf only after such a commit: this is the
// floor of F's added latency that no change to custody moves, the
// machine's share of it. The sweep (-skip disk) times single syncs
// (ledger.ProbeDisk, as custody doctor does) at a range of rates.

// diskProbeBytes is what each probe write carries: what F's journal
// writes per commit at the open-loop rate, 1.0–1.1 records of 1,269 bytes
// (a transaction's leaf at the bench's request is 1,253 bytes, its
// record header 16). The size hardly matters: 1 KiB and 4 KiB writes
// sync within 0.03 ms of each other here.
const diskProbeBytes = 1360

// diskHandler serves the probe to the parent: GET
// /commits?rate=R&n=N&bytes=B runs ledger.ProbeCommits in dir and answers
// "commits C", then each request's time in nanoseconds, one a line.
func diskHandler(dir string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /commits", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		rate, err1 := strconv.ParseFloat(q.Get("rate"), 64)
		n, err2 := strconv.Atoi(q.Get("n"))
		size, err3 := strconv.Atoi(q.Get("bytes"))
		if err1 != nil || err2 != nil || err3 != nil {
			http.Error(w, "want rate, n and bytes, numbers", http.StatusBadRequest)
			return
		}
		lat, commits, err := ledger.ProbeCommits(r.Context(), dir, rate, n, size)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "commits %d\n", commits)
		for _, d := range lat {
			b.WriteString(strconv.FormatInt(int64(d), 10))
			b.WriteByte('\n')
		}
		w.Write([]byte(b.String()))
	})
	return mux
}

// probeCommits asks the disk child for n requests' group commits at
// rate, and how many commits they took.
func probeCommits(ctx context.Context, c *child, rate float64, n int) ([]time.Duration, int, error) {
	body, err := askDisk(ctx, fmt.Sprintf("%s/commits?rate=%g&n=%d&bytes=%d", c.URL, rate, n, diskProbeBytes))
	if err != nil {
		return nil, 0, err
	}
	head, rest, _ := strings.Cut(body, "\n")
	commits, err := strconv.Atoi(strings.TrimPrefix(head, "commits "))
	if err != nil || !strings.HasPrefix(head, "commits ") {
		return nil, 0, fmt.Errorf("disk probe: %q is not a count of commits", head)
	}
	lat, err := diskTimes(rest, n)
	return lat, commits, err
}

// askDisk is the disk child's answer to a GET of u.
func askDisk(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("disk probe: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("disk probe: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("disk probe: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// diskTimes reads n times in nanoseconds, one a line.
func diskTimes(body string, n int) ([]time.Duration, error) {
	var lat []time.Duration
	for _, l := range strings.Fields(body) {
		ns, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("disk probe: %q is not a time in ns", l)
		}
		lat = append(lat, time.Duration(ns))
	}
	if len(lat) != n {
		return nil, fmt.Errorf("disk probe: %d times, want %d", len(lat), n)
	}
	return lat, nil
}

// diskDir is the disk child's directory: beside the modes' data
// directories, on the same filesystem.
func diskDir(logDir string) string { return filepath.Join(logDir, "disk") }

// diskRates are the rates of the disk sweep (-skip disk), around the
// open-loop rate's commits: a sync's cost depends on how often they
// come.
var diskRates = []float64{250, 500, 1000, 2000, 4000}

// diskPoint is the sweep at one rate.
type diskPoint struct {
	Rate          float64
	N             int
	P50, P90, P99 time.Duration
}

// runDiskSweep runs the probe at each of diskRates for d, in a
// directory of the system's temporary one (the filesystem the proxy
// benchmark's modes keep their data on).
func runDiskSweep(ctx context.Context, d time.Duration) ([]diskPoint, error) {
	dir, err := os.MkdirTemp("", "custody-bench-disk-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var pts []diskPoint
	for _, r := range diskRates {
		n := max(1, int(r*d.Seconds()))
		lat, err := ledger.ProbeDisk(ctx, dir, r, n, diskProbeBytes)
		if err != nil {
			return nil, err
		}
		pts = append(pts, diskPoint{Rate: r, N: n, P50: pct(lat, 0.5), P90: pct(lat, 0.9), P99: pct(lat, 0.99)})
	}
	return pts, nil
}
