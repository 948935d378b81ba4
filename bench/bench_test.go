package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as a child process (the proxy
// benchmark re-executes its own binary in a role).
func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		if err := runChild(context.Background(), role); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs every benchmark at tiny sizes so that the harness
// cannot rot: each mode must produce figures. It asserts no target.
func TestSmoke(t *testing.T) {
	o, err := parseOptions([]string{"-short", "-no-node", "-audit-leaves", "2000", "-ledger-time", "300ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.Proxy.Log = io.Discard
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := measure(ctx, o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proxy) != 2 {
		t.Fatalf("proxy reports: %d, want one per layout (one-core, two-core)", len(res.Proxy))
	}
	for _, rep := range res.Proxy {
		if len(rep.Modes) != len(allModes) {
			t.Fatalf("%s: %d modes, want %d", rep.Layout.Name, len(rep.Modes), len(allModes))
		}
		for _, m := range rep.Modes {
			if m.SatN == 0 || m.rps() <= 0 || len(m.Lat) == 0 || len(m.TTFB) == 0 {
				t.Errorf("%s: mode %s %s: no figures (sat %d, lat %d, ttfb %d)", rep.Layout.Name, m.Key, m.Name, m.SatN, len(m.Lat), len(m.TTFB))
			}
			if m.proc != nil && (m.HWMkB <= 0 || m.SatRSSkB <= 0) {
				t.Errorf("%s: mode %s %s: no peak RSS", rep.Layout.Name, m.Key, m.Name)
			}
			// The durable modes count their journal's group commits; a
			// leaf is durable only after one, so there is at least one.
			if durable := m.Key == "E" || m.Key == "F"; durable && (m.SatSyncs <= 0 || m.OpenSyncs <= 0) {
				t.Errorf("%s: mode %s %s: fsyncs not counted (saturation %d, open loop %d)", rep.Layout.Name, m.Key, m.Name, m.SatSyncs, m.OpenSyncs)
			} else if durable && (m.commitQuantile(0.5) <= 0 || m.commitQuantile(0.99) < m.commitQuantile(0.5)) {
				t.Errorf("%s: mode %s %s: journal commit times not read: p50 %s, p99 %s (%v)", rep.Layout.Name, m.Key, m.Name, m.commitQuantile(0.5), m.commitQuantile(0.99), m.OpenCommits)
			} else if durable && (m.OpenSched <= 0 || m.OpenSchedSlow < 0 || m.SchedSlowBound <= 0 || m.SchedSlowBound > schedSlow) {
				t.Errorf("%s: mode %s %s: scheduling waits not read: %d, %d over %g s", rep.Layout.Name, m.Key, m.Name, m.OpenSched, m.OpenSchedSlow, m.SchedSlowBound)
			}
		}
		if want := rep.Params.Rounds * rep.Params.OpenN; len(rep.Disk) != want || rep.DiskCommits < 1 || rep.DiskCommits > want {
			t.Errorf("%s: %d disk probe times in %d commits, want one per open-loop request (%d) in 1 to %[4]d commits", rep.Layout.Name, len(rep.Disk), rep.DiskCommits, want)
		}
		if j := rep.judged(); j == nil || j.Key != "F" {
			t.Errorf("%s: targets judged on %v, want F (custody serve)", rep.Layout.Name, j)
		}
	}
	// one-core pins each target to one CPU: its CPU time cannot exceed
	// its wall time by more than the clock's granularity.
	for _, m := range res.Proxy[0].Modes {
		if m.proc != nil && m.CPU > m.SatTime+100*time.Millisecond {
			t.Errorf("one-core: mode %s used %v of CPU in %v of saturation: not pinned", m.Key, m.CPU, m.SatTime)
		}
	}
	if len(res.Disk) != len(diskRates) {
		t.Errorf("disk: %d rates swept, want %d", len(res.Disk), len(diskRates))
	}
	for _, p := range res.Disk {
		if p.N <= 0 || p.P50 <= 0 || p.P99 < p.P50 {
			t.Errorf("disk at %g/s: no figures: %+v", p.Rate, p)
		}
	}
	if len(res.Tokens) != len(encodings) {
		t.Errorf("tokens: %d results, want %d", len(res.Tokens), len(encodings))
	}
	for _, tr := range res.Tokens {
		if tr.Count == 0 || tr.MBps <= 0 {
			t.Errorf("tokens %s: no figures: %+v", tr.Encoding, tr)
		}
	}
	if res.Ledger == nil || res.Ledger.Appended == 0 {
		t.Errorf("ledger: no leaves appended: %+v", res.Ledger)
	}
	if res.Audit == nil || res.Audit.AuditTime <= 0 {
		t.Errorf("audit: no figure: %+v", res.Audit)
	}
	md := res.markdown()
	for _, want := range []string{"A direct", "E durable", "F serve", "one-core", "two-core", "fsyncs/s", "journal commit p50", "waits for a processor", "The disk alone", "#### The disk", "o200k_base", "durable leaves/s", "audit of 2000 leaves"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestWriteDoc keeps what lies outside the markers and replaces what lies
// between them.
func TestWriteDoc(t *testing.T) {
	tests := []struct {
		name, old, want string
	}{
		{"new file", "", "# Benchmarks\n\nRun with `go run ./bench -write-doc`.\n\n" + beginMarker + "\n\nR2\n" + endMarker + "\n"},
		{"no markers", "# B\n\nprose\n", "# B\n\nprose\n\n" + beginMarker + "\n\nR2\n" + endMarker + "\n"},
		{"replaces between markers", "# B\n\n" + beginMarker + "\n\nR1\n" + endMarker + "\n\nprofile notes\n",
			"# B\n\n" + beginMarker + "\n\nR2\n" + endMarker + "\n\nprofile notes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeDoc(path, "R2\n"); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestReadProc reads this process's CPU time and peak RSS.
func TestReadProc(t *testing.T) {
	st, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.HWMkB <= 0 || st.RSSkB <= 0 {
		t.Errorf("no memory figures: %+v", st)
	}
}

// TestPct is the nearest-rank quantile.
func TestPct(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {0.1, 1}, {0, 1}} {
		if got := pct(ds, c.q); got != c.want {
			t.Errorf("pct(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if pct(nil, 0.5) != 0 {
		t.Error("pct of nothing is not 0")
	}
}

// TestBuildCustodyAt: -baseline builds the custody of a git ref from its
// own tree, and the binary runs.
func TestBuildCustodyAt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds custody (-short)")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, cleanup, err := buildCustodyAt(root, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "custody") {
		t.Fatalf("custody version: %v: %s", err, out)
	}
	if _, _, err := buildCustodyAt(root, "no-such-ref-"+strings.Repeat("x", 8)); err == nil {
		t.Fatal("a ref that does not exist was built")
	}
}

// TestCommitQuantile: quantiles of the journal's histogram are
// interpolated within the bucket that holds them.
func TestCommitQuantile(t *testing.T) {
	m := &mode{}
	before := scrape{commits: histogram{bounds: []float64{0.001, 0.002, 0.004}, cumulative: []int64{5, 5, 5}, count: 5}}
	after := scrape{commits: histogram{bounds: before.commits.bounds, cumulative: []int64{5, 15, 19}, count: 20}}
	m.addCommits(before, after) // 10 commits in (1, 2] ms, 4 in (2, 4], 1 past 4
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 1750 * time.Microsecond}, {0.1, 1150 * time.Microsecond}, {0.8, 3 * time.Millisecond}, {0.99, 4 * time.Millisecond}} {
		if got := m.commitQuantile(c.q); got != c.want {
			t.Errorf("q %.2f: %s, want %s", c.q, got, c.want)
		}
	}
	if got := (&mode{}).commitQuantile(0.5); got != 0 {
		t.Errorf("no histogram: %s, want 0", got)
	}
}

// TestScrapeSched: the runtime's scheduling latencies are read from a
// scrape, and the waits over schedSlow counted from its buckets.
func TestScrapeSched(t *testing.T) {
	body := func(slow int) []byte {
		return fmt.Appendf(nil, "custody_ledger_fsyncs_total 1\n"+
			"# TYPE go_sched_latencies_seconds histogram\n"+
			"go_sched_latencies_seconds_bucket{le=\"8.191999999999999e-05\"} 90\n"+
			"go_sched_latencies_seconds_bucket{le=\"0.0009175039999999999\"} 97\n"+
			"go_sched_latencies_seconds_bucket{le=\"0.010485759999999998\"} %d\n"+
			"go_sched_latencies_seconds_bucket{le=\"+Inf\"} %d\n"+
			"go_sched_latencies_seconds_sum 0.05\n"+
			"go_sched_latencies_seconds_count %d\n", 97+slow, 97+slow, 97+slow)
	}
	var js [2]scrape
	for i, slow := range []int{0, 4} {
		j, found, err := parseScrape(body(slow))
		if err != nil || !found {
			t.Fatal(found, err)
		}
		js[i] = j
	}
	m := &mode{}
	m.addSched(js[0], js[1])
	if m.OpenSched != 4 || m.OpenSchedSlow != 4 || m.SchedSlowBound != 0.0009175039999999999 {
		t.Fatalf("waits %d, over %g s %d; want 4, 4 over 0.000917504", m.OpenSched, m.SchedSlowBound, m.OpenSchedSlow)
	}
}

// TestParseScrape: a real /metrics scrape of custody serve
// (testdata/metrics.txt: the default config, three chat completions)
// gives the journal's fsyncs, its group-commit histogram and the
// runtime's scheduling latencies, as the exposition format defines them,
// not as a line happens to look: the same scrape with timestamps on its
// samples, its labels in another order or its families in another order
// reads the same; a scrape that is not the format is an error, and one
// without the fsync counter (an older custody) is not found.
func TestParseScrape(t *testing.T) {
	real, err := os.ReadFile("testdata/metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, found, err := parseScrape(real)
	if err != nil || !found {
		t.Fatalf("parseScrape: found %v, %v", found, err)
	}
	if want.syncs != 4 || want.commits.count != 4 || len(want.commits.bounds) != 34 || want.sched.count != 103 {
		t.Fatalf("fsyncs %d, commits %d in %d buckets, scheduling waits %d; want 4, 4 in 34, 103",
			want.syncs, want.commits.count, len(want.commits.bounds), want.sched.count)
	}
	if !slices.IsSorted(want.commits.bounds) || !slices.IsSorted(want.sched.bounds) || want.commits.bounds[0] != 2.5e-05 {
		t.Errorf("bounds not ascending from 2.5e-05: %v, %v", want.commits.bounds, want.sched.bounds)
	}
	if c := want.commits.cumulative; c[len(c)-1] > want.commits.count || c[0] != 0 {
		t.Errorf("commit buckets %v, count %d", c, want.commits.count)
	}

	stamped := regexp.MustCompile(`(?m)^([a-z_]+(\{[^}]*\})? [^ \n]+)$`).ReplaceAll(real, []byte("$1 1765000000000"))
	labelled := bytes.ReplaceAll(real, []byte(`custody_ledger_commit_seconds_bucket{le=`), []byte(`custody_ledger_commit_seconds_bucket{shard="0",le=`))
	for _, m := range []string{"custody_ledger_commit_seconds_sum", "custody_ledger_commit_seconds_count"} {
		labelled = bytes.ReplaceAll(labelled, []byte(m+" "), []byte(m+`{shard="0"} `))
	}
	// The runtime's families first: the format does not order families.
	i := bytes.Index(real, []byte("# HELP go_"))
	reordered := append(slices.Clone(real[i:]), real[:i]...)
	for name, b := range map[string][]byte{"timestamps": stamped, "another label first": labelled, "families reordered": reordered} {
		got, found, err := parseScrape(b)
		if err != nil || !found || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: found %v, err %v\n got %+v\nwant %+v", name, found, err, got, want)
		}
	}

	if _, found, err := parseScrape(bytes.ReplaceAll(real, []byte("custody_ledger_fsyncs_total"), []byte("custody_ledger_syncs"))); found || err != nil {
		t.Errorf("no fsync counter: found %v, err %v; want not found", found, err)
	}
	if _, _, err := parseScrape([]byte("custody_ledger_fsyncs_total{ 4\n")); err == nil {
		t.Error("a scrape that is not the text format parsed")
	}
}

// TestRoundOrder: the modes run in their order in even rounds and
// reversed in odd ones, and the given slice is left as it was.
func TestRoundOrder(t *testing.T) {
	modes := []string{"A", "B", "F", "G"}
	for r, want := range []string{"ABFG", "GFBA", "ABFG", "GFBA"} {
		if got := strings.Join(roundOrder(modes, r), ""); got != want {
			t.Errorf("round %d: %s, want %s", r, got, want)
		}
	}
	if strings.Join(modes, "") != "ABFG" {
		t.Errorf("the modes were reordered in place: %v", modes)
	}
}
