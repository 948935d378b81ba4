package contamination

import (
	"bytes"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuMBps reports, beside the wall-clock MB/s, the MB/s per second of
// process CPU time: on a shared, oversubscribed machine wall time mostly
// measures the neighbours. Call it with the result of cpuStart after the loop.
func cpuMBps(b *testing.B, start time.Duration, bytesPerOp int) {
	used := cpuNow() - start
	if used <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/used.Seconds()/1e6, "cpu-MB/s")
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchPrompts(b *testing.B, n int) []string {
	c := newCorpus(b, 42, 0.25)
	out := make([]string, n)
	for i := range out {
		out[i], _ = c.prompt()
	}
	return out
}

func BenchmarkFingerprint(b *testing.B) {
	c := newCorpus(b, 1, 0.25)
	text := c.paragraph(60) // about 3 KB
	d := New(Config{})
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	start := cpuNow()
	for b.Loop() {
		d.Fingerprint(text)
	}
	cpuMBps(b, start, len(text))
}

// benchDetector is a Detector in steady state: MaxPrompts prompts
// remembered, 100 canary secrets, warm.
func benchDetector(b *testing.B) (*Detector, []string) {
	d := New(Config{Warmup: -1})
	prompts := benchPrompts(b, 4096)
	for i, p := range prompts {
		d.Remember(fmt.Sprint(i), "t", d.Fingerprint(p))
	}
	for i := range 100 {
		d.AddSecret(fmt.Sprintf("canary-%04d-%016x", i, mix64(uint64(i))), fmt.Sprint(i))
	}
	return d, prompts
}

// BenchmarkScanner streams a clean response in 64-byte deltas, as a
// streaming upstream sends them, through both mechanisms.
func BenchmarkScanner(b *testing.B) {
	d, prompts := benchDetector(b)
	c := newCorpus(b, 7, 0.25)
	own := prompts[100]
	resp := []byte(c.response(own) + " " + c.paragraph(20))
	pr := d.Fingerprint(own)
	b.SetBytes(int64(len(resp)))
	b.ReportAllocs()
	start := cpuNow()
	defer func() { cpuMBps(b, start, len(resp)) }()
	for b.Loop() {
		s := d.NewScanner("100", pr, own)
		for p := resp; len(p) > 0; {
			n := min(64, len(p))
			s.Write(p[:n])
			p = p[n:]
		}
		s.Close()
		if _, ok := s.Finding(); ok {
			b.Fatal("clean response flagged")
		}
	}
}

// BenchmarkSecretsNaive is the baseline for the automaton: bytes.Contains
// of each of the 100 normalised secrets in the normalised response.
func BenchmarkSecretsNaive(b *testing.B) {
	c := newCorpus(b, 7, 0.25)
	p, _ := c.prompt()
	resp := normalizeString(c.response(p) + " " + c.paragraph(20))
	var secrets [][]byte
	for i := range 100 {
		secrets = append(secrets, normalizeString(fmt.Sprintf("canary-%04d-%016x", i, mix64(uint64(i)))))
	}
	b.SetBytes(int64(len(resp)))
	start := cpuNow()
	defer func() { cpuMBps(b, start, len(resp)) }()
	for b.Loop() {
		for _, s := range secrets {
			if bytes.Contains(resp, s) {
				b.Fatal("found")
			}
		}
	}
}

// BenchmarkSecretsAutomaton is the automaton alone on the same input.
func BenchmarkSecretsAutomaton(b *testing.B) {
	d := New(Config{})
	for i := range 100 {
		d.AddSecret(fmt.Sprintf("canary-%04d-%016x", i, mix64(uint64(i))), fmt.Sprint(i))
	}
	c := newCorpus(b, 7, 0.25)
	p, _ := c.prompt()
	resp := normalizeString(c.response(p) + " " + c.paragraph(20))
	a := d.ac.Load()
	b.SetBytes(int64(len(resp)))
	start := cpuNow()
	defer func() { cpuMBps(b, start, len(resp)) }()
	for b.Loop() {
		st := uint32(0)
		for _, x := range resp {
			st = a.step(st, x)
			if st&1 != 0 {
				b.Fatal("found")
			}
		}
	}
}

// BenchmarkRemember is one admitted request in steady state (the oldest
// prompt forgotten for each new one); Fingerprint is done beforehand.
func BenchmarkRemember(b *testing.B) {
	d := New(Config{})
	prompts := benchPrompts(b, 8192)
	prints := make([]*Prints, len(prompts))
	for i, p := range prompts {
		prints[i] = d.Fingerprint(p)
	}
	for i := range 4096 {
		d.Remember(fmt.Sprint(i), "t", prints[i])
	}
	b.ReportAllocs()
	i := 0
	start := cpuNow()
	for b.Loop() {
		d.Remember("req", "t", prints[i%len(prints)])
		i++
	}
	if used := cpuNow() - start; used > 0 {
		b.ReportMetric(float64(b.N)/used.Seconds(), "cpu-ops/s")
	}
}

// BenchmarkMemory reports the heap held per remembered prompt and per
// remembered fingerprint, with the default 4096 prompts of the corpus.
func BenchmarkMemory(b *testing.B) {
	prompts := benchPrompts(b, 4096)
	for b.Loop() {
		d := New(Config{})
		prints := make([]*Prints, len(prompts))
		for i, p := range prompts {
			prints[i] = d.Fingerprint(p)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i, p := range prints {
			d.Remember(fmt.Sprintf("req-%08d", i), "tenant", p)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(prints) // held in both readings: not counted
		n, fps := d.Remembered()
		held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		b.ReportMetric(held/float64(n), "B/prompt")
		b.ReportMetric(held/float64(fps), "B/fingerprint")
		b.ReportMetric(float64(fps)/float64(n), "fingerprints/prompt")
		runtime.KeepAlive(d)
	}
}
