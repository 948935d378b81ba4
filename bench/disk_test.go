package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// TestDiskProbe: the probe keeps its schedule, times every sync, and
// leaves nothing behind.
func TestDiskProbe(t *testing.T) {
	dir := t.TempDir()
	const n, rate = 40, 400.0
	began := time.Now()
	lat, err := diskProbe(context.Background(), dir, rate, n, diskProbeBytes)
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
	if _, err := diskProbe(context.Background(), dir, 0, n, diskProbeBytes); err == nil {
		t.Error("a zero rate was taken")
	}
}

// TestDiskHandler: the parent's reading of the child's answer, and a bad
// query refused.
func TestDiskHandler(t *testing.T) {
	srv := httptest.NewServer(diskHandler(t.TempDir()))
	defer srv.Close()
	lat, err := probeDisk(context.Background(), &child{URL: srv.URL}, 1000, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 5 || pct(lat, 0.5) <= 0 {
		t.Errorf("times %v", lat)
	}
	resp, err := http.Get(srv.URL + "/fdatasync?rate=x&n=1&bytes=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("rate=x: %s, want 400", resp.Status)
	}
}
