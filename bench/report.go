package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine is where and on what the run happened.
type machine struct {
	CPUs     int
	CPUModel string
	Kernel   string
	Go       string
	Commit   string
	Date     time.Time
}

func describeMachine(root string) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Date: time.Now().UTC(), CPUModel: "unknown",
		Commit: "unknown", Kernel: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	if b, err := cmd.Output(); err == nil {
		m.Commit = strings.TrimSpace(string(b))
		// Changes to docs/ (this report itself) do not change the figures.
		st := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs")
		st.Dir = root
		if b, err := st.Output(); err == nil && len(bytes.TrimSpace(b)) > 0 {
			m.Commit += " (with uncommitted changes)"
		}
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**not met**"
}

// markdown is the report: the machine, the proxy figures, the docs/BENCHMARKS.md
// targets (judged on mode E), tokens, ledger.
func (r *results) markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "### Run of %s\n\n", m.Date.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "- machine: %d CPUs (nproc), %s, Linux %s, %s\n", m.CPUs, m.CPUModel, m.Kernel, m.Go)
	fmt.Fprintf(&b, "- commit: %s\n", m.Commit)
	mode := "full"
	if r.Opts.Short {
		mode = "short (smoke: sizes too small for the figures to mean anything)"
	}
	fmt.Fprintf(&b, "- run: %s, took %v\n\n", mode, r.Took.Round(time.Second))
	for _, p := range r.Proxy {
		r.proxyMarkdown(&b, p)
	}
	if len(r.Disk) > 0 {
		b.WriteString("#### The disk\n\n")
		fmt.Fprintf(&b, "One write of %d bytes and one fdatasync of a preallocated file in the system's temporary directory, paced (nothing else running), %v at each rate: what a journal commit costs on this machine when commits come that often.\n\n", diskProbeBytes, r.Opts.DiskDur)
		b.WriteString("| syncs/s | syncs | p50 | p90 | p99 |\n|---|---|---|---|---|\n")
		for _, p := range r.Disk {
			fmt.Fprintf(&b, "| %.0f | %d | %s | %s | %s |\n", p.Rate, p.N, ms(p.P50), ms(p.P90), ms(p.P99))
		}
		b.WriteString("\n")
	}
	if len(r.Tokens) > 0 {
		b.WriteString("#### Token counting (one core each, same documents)\n\n")
		fmt.Fprintf(&b, "Corpus: the repository's .go and .md files, %d bytes, counted file by file.\n\n", r.Tokens[0].Bytes)
		b.WriteString("| encoding | custody tokens | npm tiktoken tokens | counts | custody MB/s/core | tiktoken MB/s/core | custody / tiktoken | target ≥ 10 MB/s (o200k_base) |\n|---|---|---|---|---|---|---|---|\n")
		for _, t := range r.Tokens {
			node, nodeMB, match, ratio := "—", "—", "not compared: "+t.NodeNote, "—"
			if t.NodeCount >= 0 {
				node, nodeMB = fmt.Sprint(t.NodeCount), fmt.Sprintf("%.2f", t.NodeMBps)
				ratio = fmt.Sprintf("%.2f×", t.MBps/t.NodeMBps)
				match = "identical"
				if !t.CountMatch {
					match = fmt.Sprintf("**differ by %d**", t.Count-t.NodeCount)
				}
			}
			target := "—"
			if t.Encoding == "o200k_base" {
				target = fmt.Sprintf("%s (%.2f× the target)", verdict(t.MBps >= 10), t.MBps/10)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %.2f | %s | %s | %s |\n", t.Encoding, t.Count, node, match, t.MBps, nodeMB, ratio, target)
		}
		b.WriteString("\n")
	}
	if l, a := r.Ledger, r.Audit; l != nil || a != nil {
		b.WriteString("#### Ledger\n\n| measure | figure | target | |\n|---|---|---|---|\n")
		if l != nil {
			fmt.Fprintf(&b, "| durable leaves/s, %d concurrent appenders, %v | %.0f (%d leaves) | ≥ 10,000 | %s (%.2f×) |\n",
				l.Appenders, l.AppendTime.Round(time.Millisecond), l.LeavesPerSec, l.Appended, verdict(l.LeavesPerSec >= 10000), l.LeavesPerSec/10000)
			fmt.Fprintf(&b, "| Append latency, %d appenders: p50 / p99 | %s / %s | | |\n", l.Appenders, ms(l.P50), ms(l.P99))
			fmt.Fprintf(&b, "| Append latency, one appender alone: p50 / p99 | %s / %s | (an fsync costs about 0.1 ms) | |\n", ms(l.SerialP50), ms(l.SerialP99))
		}
		if a != nil {
			scaled := ""
			if a.AuditLeaves != 1_000_000 {
				scaled = fmt.Sprintf(" (scaled from %d leaves)", a.AuditLeaves)
			}
			per1M := time.Duration(float64(a.AuditTime) * 1e6 / float64(a.AuditLeaves))
			fmt.Fprintf(&b, "| audit of %d leaves (verify.Audit from the directory) | %v; %v per 1,000,000%s | ≤ 10 s per 1,000,000 | %s (%.2f× the limit) |\n",
				a.AuditLeaves, a.AuditTime.Round(time.Millisecond), per1M.Round(time.Millisecond), scaled, verdict(per1M <= 10*time.Second), per1M.Seconds()/10)
			fmt.Fprintf(&b, "| writing that log through tessera (not a target) | %v | | |\n", a.BuildTime.Round(time.Millisecond))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *results) proxyMarkdown(b *strings.Builder, p *proxyReport) {
	pp := p.Params
	fmt.Fprintf(b, "#### Proxies, %s (%d interleaved rounds)\n\n", p.Layout.Name, pp.Rounds)
	fmt.Fprintf(b, "Layout: %s.\n\n", p.Layout.describe())
	sat := fmt.Sprintf("%v", pp.SatDur)
	if pp.SatN > 0 {
		sat = fmt.Sprintf("%d requests", pp.SatN)
	}
	fmt.Fprintf(b, "Saturation: closed loop, %d workers, %s per mode per round. Latency: open loop at %.0f req/s, %d requests (and %d streaming) per mode per round, measured from each request's intended send time.",
		pp.Conc, sat, p.Rate, pp.OpenN, pp.StrN)
	if p.RateLowered {
		fmt.Fprintf(b, " **The open-loop rate was lowered from %.0f to %.0f req/s** because the slowest mode saturated at %.0f req/s in calibration (under 1.5× %.0f).",
			pp.Rate, p.Rate, p.CalibRPS, pp.Rate)
	}
	b.WriteString("\n\n| mode | saturated req/s | p50 | p90 | p99 | p99.9 | stream TTFB p50 | proxy CPU/req | proxy run-queue wait ÷ wall time | sim CPU/req | proxy RSS at saturation (peak of the run) | fsyncs/s saturated (leaves each) | fsyncs/s at the open-loop rate | journal commit p50 / p99 at the open-loop rate | waits for a processor over ~1 ms per 1,000 requests at the open-loop rate | errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range p.Modes {
		cpu, wait, rss, satSync, openSync, commit, sched := "—", "—", "—", "—", "—", "—", "—"
		if m.proc != nil {
			cpu, rss = us(m.cpuPerReq()), fmt.Sprintf("%.1f MB (%.1f MB)", float64(m.SatRSSkB)/1024, float64(m.HWMkB)/1024)
			wait = fmt.Sprintf("%.0f %%", 100*m.Wait.Seconds()/m.SatTime.Seconds())
		}
		if m.proc != nil && m.proc.Syncs != "" && m.SatSyncs > 0 {
			satSync = fmt.Sprintf("%.0f (%.1f)", m.satSyncsPerSec(), float64(m.SatN)/math.Max(1, float64(m.SatSyncs)))
			openSync = fmt.Sprintf("%.0f", m.openSyncsPerSec())
		}
		if m.commitQuantile(0.5) > 0 {
			commit = ms(m.commitQuantile(0.5)) + " / " + ms(m.commitQuantile(0.99))
		}
		if m.OpenSched > 0 && m.OpenN > 0 {
			sched = fmt.Sprintf("%.1f", 1000*float64(m.OpenSchedSlow)/float64(m.OpenN))
		}
		errs := fmt.Sprint(m.SatErr + m.OpenErr)
		if m.FirstErr != nil {
			errs += fmt.Sprintf(" (first: %v)", m.FirstErr)
		}
		fmt.Fprintf(b, "| %s %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Key, m.Name, m.rps(),
			ms(pct(m.Lat, 0.5)), ms(pct(m.Lat, 0.9)), ms(pct(m.Lat, 0.99)), ms(pct(m.Lat, 0.999)), ms(pct(m.TTFB, 0.5)),
			cpu, wait, us(m.simCPUPerReq()), rss, satSync, openSync, commit, sched, errs)
	}
	a := p.mode("A")
	added := func(m *mode, q float64) time.Duration { return pct(m.Lat, q) - pct(a.Lat, q) }
	addedTTFB := func(m *mode) time.Duration { return pct(m.TTFB, 0.5) - pct(a.TTFB, 0.5) }
	b.WriteString("\nAdded latency (proxied minus direct, same quantile):\n\n| mode | added p50 | added p90 | added p99 | added p99.9 | added stream TTFB p50 |\n|---|---|---|---|---|---|\n")
	for _, m := range p.Modes[1:] {
		fmt.Fprintf(b, "| %s %s | %s | %s | %s | %s | %s |\n", m.Key, m.Name, ms(added(m, 0.5)), ms(added(m, 0.9)),
			ms(added(m, 0.99)), ms(added(m, 0.999)), ms(addedTTFB(m)))
	}
	judged := p.judged()
	if judged == nil {
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "\nThe goals (issue 32's, docs/BENCHMARKS.md): against the bare proxy (B) and the disk alone (below), both of this run. They are judged on %s %s; the other custody modes show where the cost comes from.\n\n", judged.Key, judged.Name)
	others := slices.DeleteFunc(slices.Clone(p.Modes[2:]), func(m *mode) bool { return m == judged })
	b.WriteString("| goal | limit |")
	for _, m := range others {
		fmt.Fprintf(b, " %s %s |", m.Key, m.Name)
	}
	fmt.Fprintf(b, " %s %s | %s |\n|---|---|", judged.Key, judged.Name, judged.Key)
	b.WriteString(strings.Repeat("---|", len(others)+2) + "\n")
	for _, rw := range p.goalRows(added, addedTTFB) {
		fmt.Fprintf(b, "| %s | %s |", rw.name, rw.limit)
		for _, m := range others {
			v, _ := rw.val(m)
			fmt.Fprintf(b, " %s |", v)
		}
		v, ok := rw.val(judged)
		fmt.Fprintf(b, " %s | %s |\n", v, verdict(ok))
	}
	if len(p.Disk) > 0 {
		fmt.Fprintf(b, "\nThe disk alone (after each round, a process of its own on the target's CPUs, in the modes' filesystem): each time the open loop's %d requests at %.0f req/s, each committed as custody's journal commits, with every other that had arrived since the last commit, in one write (%d bytes a request) and one fdatasync of a preallocated file: %d requests in %d commits. From a request's arrival to the end of its commit: p50 %s, p90 %s, p99 %s, p99.9 %s. %s acknowledges a response only after such a commit, so this is the floor of what it adds to bare's latency on this machine.\n",
			p.Params.OpenN, p.Rate, diskProbeBytes, len(p.Disk), p.DiskCommits,
			ms(pct(p.Disk, 0.5)), ms(pct(p.Disk, 0.9)), ms(pct(p.Disk, 0.99)), ms(pct(p.Disk, 0.999)), judged.Key)
	}
	b.WriteString("\n")
}

// judged is the mode the targets are judged on: custody serve (F), else
// the assembled durable mode (E).
func (p *proxyReport) judged() *mode {
	if m := p.mode("F"); m != nil {
		return m
	}
	return p.mode("E")
}

// goalRow is one of the goals (docs/BENCHMARKS.md), as issue 32 set them.
type goalRow struct {
	name, limit string
	val         func(m *mode) (string, bool)
}

// p999Limit is the one-core p99.9 goal.
const p999Limit = 20 * time.Millisecond

// goalRows are issue 32's goals: the latency a proxy adds over bare's is
// held to what the disk's commit costs in the same run, at p50 (with
// 0.1 ms to spare) and at p99, over the rounds and in the first round
// after start alone (a client does not wait for custody to warm up). Not
// in every round: one stall of a few milliseconds moves a round's p99
// (the 30th slowest of 3,000), and a plain proxy (C) failed that in 2 of
// 2 layouts of a 6-round run.
func (p *proxyReport) goalRows(added func(*mode, float64) time.Duration, addedTTFB func(*mode) time.Duration) []goalRow {
	bare := p.mode("B")
	disk50, disk99 := pct(p.Disk, 0.5), pct(p.Disk, 0.99)
	noDisk := func() (string, bool) { return "no disk probe (no durable mode ran)", false }
	rows := []goalRow{
		{"added p50 − bare's added p50", fmt.Sprintf("≤ the disk's commit p50 + 0.100 ms (%s)", ms(disk50+100*time.Microsecond)), func(m *mode) (string, bool) {
			if len(p.Disk) == 0 {
				return noDisk()
			}
			d := added(m, 0.5) - added(bare, 0.5)
			return fmt.Sprintf("%+.3f ms", float64(d)/1e6), d <= disk50+100*time.Microsecond
		}},
		{"added p99 − bare's added p99", fmt.Sprintf("≤ the disk's commit p99 (%s)", ms(disk99)), func(m *mode) (string, bool) {
			if len(p.Disk) == 0 {
				return noDisk()
			}
			d := added(m, 0.99) - added(bare, 0.99)
			return fmt.Sprintf("%+.3f ms", float64(d)/1e6), d <= disk99
		}},
		{"the same in the first round after start", "≤ that round's disk commit p99", func(m *mode) (string, bool) {
			if len(m.FirstLat) == 0 || len(bare.FirstLat) == 0 || len(p.FirstDisk) == 0 {
				return noDisk()
			}
			// The direct p99 both added latencies subtract cancels out.
			d, disk := pct(m.FirstLat, 0.99)-pct(bare.FirstLat, 0.99), pct(p.FirstDisk, 0.99)
			return fmt.Sprintf("%+.3f ms (disk %s)", float64(d)/1e6, ms(disk)), d <= disk
		}},
	}
	if p.Layout.GOMAXPROCS == 1 {
		rows = append(rows, goalRow{"p99.9 (one core)", "≤ " + ms(p999Limit), func(m *mode) (string, bool) {
			q := pct(m.Lat, 0.999)
			return ms(q), q <= p999Limit
		}})
	}
	return append(rows,
		goalRow{"saturated throughput ÷ bare's (median of the rounds' ratios)", "≥ 0.8×", func(m *mode) (string, bool) {
			x := roundRatio(m, bare)
			return fmt.Sprintf("%.2f×", x), x >= 0.8
		}},
		goalRow{"CPU/request ÷ bare's", "≤ 1.5×", func(m *mode) (string, bool) {
			x := ratio(m.cpuPerReq(), bare.cpuPerReq())
			return fmt.Sprintf("%.2f×", x), x <= 1.5
		}},
		goalRow{"RSS at saturation", "≤ 100 MB", func(m *mode) (string, bool) {
			mb := float64(m.SatRSSkB) / 1024
			return fmt.Sprintf("%.1f MB", mb), mb <= 100
		}},
		goalRow{"stream added TTFB p50 − bare's", "≤ +0.200 ms", func(m *mode) (string, bool) {
			d := addedTTFB(m) - addedTTFB(bare)
			return fmt.Sprintf("%+.3f ms", float64(d)/1e6), d <= 200*time.Microsecond
		}},
	)
}

// roundRatio is the median over rounds of m's saturated throughput over
// base's in the same round: a burst of noise in one round moves one ratio,
// not the result.
func roundRatio(m, base *mode) float64 {
	var rs []float64
	for i := range min(len(m.SatRPS), len(base.SatRPS)) {
		rs = append(rs, m.SatRPS[i]/base.SatRPS[i])
	}
	if len(rs) == 0 {
		return 0
	}
	slices.Sort(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2]
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
}

// ratio is x/y, +Inf when y is not positive (a floor at or under zero
// makes any ratio meaningless; the table then shows it as such).
func ratio(x, y time.Duration) float64 {
	if y <= 0 {
		if x <= 0 {
			return 1
		}
		return math.Inf(1)
	}
	return float64(x) / float64(y)
}

// Markers delimiting the generated part of docs/BENCHMARKS.md: what lies
// outside them (the method, the profile's reading) is kept.
const (
	beginMarker = "<!-- bench:results:begin (written by `go run ./bench -write-doc`) -->"
	endMarker   = "<!-- bench:results:end -->"
)

// writeDoc puts report between the markers of path, creating the file
// (with a short preamble) if it does not exist.
func writeDoc(path, report string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := string(old)
	block := beginMarker + "\n\n" + report + endMarker
	i, j := strings.Index(doc, beginMarker), strings.Index(doc, endMarker)
	switch {
	case i >= 0 && j > i:
		doc = doc[:i] + block + doc[j+len(endMarker):]
	case len(doc) == 0:
		doc = "# Benchmarks\n\nRun with `go run ./bench -write-doc`.\n\n" + block + "\n"
	default:
		doc = strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
