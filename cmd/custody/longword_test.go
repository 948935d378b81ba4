package main

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// procCPU is a process's user + system CPU time in clock ticks (1/100 s
// on Linux), and its peak and current resident set in kB.
func procCPU(t *testing.T, pid int) (ticks int, hwmKB, rssKB int) {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, line := range strings.Split(string(status), "\n") {
		fs := strings.Fields(line)
		if len(fs) >= 2 && fs[0] == "VmHWM:" {
			hwmKB, _ = strconv.Atoi(fs[1])
		}
		if len(fs) >= 2 && fs[0] == "VmRSS:" {
			rssKB, _ = strconv.Atoi(fs[1])
		}
	}
	return u + s, hwmKB, rssKB
}

// TestLongWordIsDecidedCheaply: a body at the default size limit whose
// prompt is one unbroken word (a single piece for every tokenizer) is
// refused as over capacity in under a second of the server's CPU and
// under 100 MB more memory: it is counted only until it passes capacity,
// in bounded pieces.
func TestLongWordIsDecidedCheaply(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir)
	r := rand.New(rand.NewPCG(3, 4))
	word := make([]byte, 31<<20)
	for i := range word {
		word[i] = byte('a' + r.IntN(26))
	}
	body := `{"model":"sim-1","messages":[{"role":"user","content":"` + string(word) + `"}]}`
	word = nil
	pid := s.cmd.Process.Pid
	// One small request first, so the server's tables are loaded.
	post(t, s.URL+"/v1/chat/completions", "", chatBody("sim-1", "hello", false))
	cpu0, _, rss0 := procCPU(t, pid)
	resp, out := post(t, s.URL+"/v1/chat/completions", "", body)
	cpu1, hwm, _ := procCPU(t, pid)
	if resp.StatusCode != 400 || outcome(400, out) != "context_length_exceeded" {
		t.Fatalf("%d %.300s", resp.StatusCode, out)
	}
	secs := float64(cpu1-cpu0) / 100
	extraMB := float64(hwm-rss0) / 1024
	t.Logf("31 MiB one-word prompt: refused in %.2f s of CPU, peak RSS %d MB (+%.0f MB)", secs, hwm/1024, extraMB)
	if secs >= 1 {
		t.Errorf("%.2f s of CPU, want < 1 s", secs)
	}
	if extraMB >= 100 {
		t.Errorf("+%.0f MB at peak, want < 100 MB", extraMB)
	}
}
