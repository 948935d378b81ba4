package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiskFinding: a disk that flushes in milliseconds is a warning with
// a fix; one that flushes in a fraction of one is fine.
func TestDiskFinding(t *testing.T) {
	times := func(d time.Duration) []time.Duration {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = d + time.Duration(i)*time.Microsecond
		}
		return lat
	}
	fast := diskFinding("/d", times(200*time.Microsecond))
	if fast.Status != OK || fast.Fix != "" || !strings.Contains(fast.Detail, "0.25 ms at p50") || !strings.Contains(fast.Detail, "0.30 ms at p99") {
		t.Errorf("fast disk: %+v", fast)
	}
	slow := diskFinding("/d", times(4*time.Millisecond))
	if slow.Status != Warn || !strings.Contains(slow.Fix, "local SSD") || !strings.Contains(slow.Detail, "4.05 ms at p50") {
		t.Errorf("slow disk: %+v", slow)
	}
}

// TestDisk probes a real directory, one serve has yet to create, and one
// it cannot create.
func TestDisk(t *testing.T) {
	dir := t.TempDir()
	for d, want := range map[string]string{
		dir:                              "in " + dir + " takes",
		filepath.Join(dir, "not", "yet"): "in " + dir + " (data_dir " + filepath.Join(dir, "not", "yet") + " does not exist yet; serve creates it there) takes",
	} {
		f := Disk(context.Background(), d)
		if f.Check != CheckDisk || f.Status == Problem || !strings.Contains(f.Detail, want) {
			t.Errorf("%s: %+v, want %q in its detail", d, f, want)
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f := Disk(context.Background(), filepath.Join(file, "data"))
	if f.Status != Problem || !strings.Contains(f.Detail, "not a directory") || f.Fix == "" {
		t.Errorf("data_dir under a file: %+v", f)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("the probe left files behind: %v", left)
	}
}
