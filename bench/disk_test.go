package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDiskHandler: the parent's reading of the child's answer, and a bad
// query refused.
func TestDiskHandler(t *testing.T) {
	srv := httptest.NewServer(diskHandler(t.TempDir()))
	defer srv.Close()
	lat, commits, err := probeCommits(context.Background(), &child{URL: srv.URL}, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) != 7 || pct(lat, 0.5) <= 0 || commits < 1 || commits > 7 {
		t.Errorf("times %v in %d commits", lat, commits)
	}
	resp, err := http.Get(srv.URL + "/commits?rate=x&n=1&bytes=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("rate=x: %s, want 400", resp.Status)
	}
}
