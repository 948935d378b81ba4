package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// tailReport is what an open-loop execution trace says about the tail:
// how long the server's requests took inside the process, and how many
// of the slowest hundredth overlapped one of the collector's mark phases,
// beside the middle tenth.
type tailReport struct {
	Requests      int
	P50, P99      time.Duration
	Slowest       int // the slowest 1 %
	SlowestInGC   int // of those, how many overlapped a mark phase
	Middle        int // the middle 10 % (45th to 55th percentile)
	MiddleInGC    int
	Collections   int
	TraceDuration time.Duration

	// The journal's waits for its fsync (commitSites: from the block to
	// the wake-up, or the syscall's entry to its return): those that
	// overlapped a mark phase and the others. With one CPU a mark phase
	// leaves it no idle time, and the kernel threads that carry an AIO
	// fsync to its completion likely wait for it (docs/BENCHMARKS.md).
	Commits, CommitsInGC      int
	CommitP50, CommitP99      time.Duration // the others
	InGCP50, InGCP90, InGCP99 time.Duration
}

// commitSites name the functions under which a process waits for its
// journal's fsync: parked in the poller, or in the syscall.
type commitSites struct{ parked, syscall string }

// serveCommits are custody serve's: with one P the journal parks for its
// AIO fsync's completion, with more it calls fdatasync.
var serveCommits = commitSites{parked: "ledger.(*dataSyncer).sync", syscall: "ledger.fdatasync"}

func (t tailReport) String() string {
	s := fmt.Sprintf("%d requests in %v of trace, in the process p50 %v p99 %v; the slowest 1 %% (%d): %d overlapped a GC mark phase (the middle 10 %%: %d of %d); %d collections",
		t.Requests, t.TraceDuration.Round(time.Millisecond), t.P50.Round(time.Microsecond), t.P99.Round(time.Microsecond),
		t.Slowest, t.SlowestInGC, t.MiddleInGC, t.Middle, t.Collections)
	if t.Commits > 0 {
		us := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
		s += fmt.Sprintf("; the journal's fsync waits: %d outside a mark phase, p50 %v p99 %v; %d overlapping one, p50 %v p90 %v p99 %v",
			t.Commits-t.CommitsInGC, us(t.CommitP50), us(t.CommitP99), t.CommitsInGC, us(t.InGCP50), us(t.InGCP90), us(t.InGCP99))
	}
	return s
}

// span is one interval of the trace's clock.
type span struct{ start, end trace.Time }

func (s span) overlaps(o span) bool { return s.start < o.end && o.start < s.end }

// readTail reads the execution trace at path, its commit waits at
// commit's sites (serveCommits for serve's trace). A request is a net/http
// connection goroutine's time from the end of its idle wait for the next
// request's bytes (bufio Peek in conn.serve, outside any handler) to the
// start of the next such wait: the request read, handled and answered. A
// request whose bytes were there before the goroutine waited for them is
// counted with the one before it (never under the bench's open loop, where
// a connection is idle for tens of milliseconds between requests).
func readTail(path string, commit commitSites) (tailReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return tailReport{}, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return tailReport{}, fmt.Errorf("%s: %w", path, err)
	}
	var (
		rep         tailReport
		first, last trace.Time
		idle        = map[trace.GoID]bool{}
		begun       = map[trace.GoID]trace.Time{}
		reqs        []span
		marks       []span
		committing  = map[trace.GoID]trace.Time{}
		commits     []span
		markStart   trace.Time
	)
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return tailReport{}, fmt.Errorf("%s: %w", path, err)
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		switch ev.Kind() {
		case trace.EventRangeBegin, trace.EventRangeActive:
			if ev.Range().Name == "GC concurrent mark phase" {
				markStart = ev.Time()
			}
		case trace.EventRangeEnd:
			if ev.Range().Name == "GC concurrent mark phase" {
				if markStart == 0 {
					markStart = first // begun before the trace
				}
				marks = append(marks, span{markStart, ev.Time()})
				markStart = 0
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			// With one P the journal waits in the poller for its AIO
			// fsync (Waiting); with more, in the fdatasync syscall.
			if from == trace.GoRunning && (to == trace.GoWaiting && within(ev.Stack(), commit.parked) ||
				to == trace.GoSyscall && within(ev.Stack(), commit.syscall)) {
				committing[g] = ev.Time()
			}
			if t, ok := committing[g]; ok && (from == trace.GoWaiting && to == trace.GoRunnable || from == trace.GoSyscall) {
				commits = append(commits, span{t, ev.Time()})
				delete(committing, g)
			}
			switch {
			case from == trace.GoRunning && to == trace.GoWaiting && idleWait(ev.Stack()):
				if t, ok := begun[g]; ok {
					reqs = append(reqs, span{t, ev.Time()})
					delete(begun, g)
				}
				idle[g] = true
			case from == trace.GoWaiting && to == trace.GoRunnable && idle[g]:
				idle[g] = false
				begun[g] = ev.Time()
			}
		}
	}
	if markStart != 0 {
		marks = append(marks, span{markStart, last})
	}
	rep.Collections, rep.TraceDuration = len(marks), time.Duration(last-first)
	if len(reqs) == 0 {
		return rep, fmt.Errorf("%s: no requests in the trace", path)
	}
	slices.SortFunc(reqs, func(a, b span) int { return int((b.end - b.start) - (a.end - a.start)) })
	n := len(reqs)
	dur := func(s span) time.Duration { return time.Duration(s.end - s.start) }
	rep.Requests, rep.P50, rep.P99 = n, dur(reqs[n/2]), dur(reqs[n/100])
	inMark := func(s span) bool { return slices.ContainsFunc(marks, s.overlaps) }
	inGC := func(sel []span) (hit int) {
		for _, s := range sel {
			if inMark(s) {
				hit++
			}
		}
		return hit
	}
	slowest := reqs[:max(1, n/100)]
	middle := reqs[n*45/100 : max(n*55/100, n*45/100+1)]
	rep.Slowest, rep.SlowestInGC = len(slowest), inGC(slowest)
	rep.Middle, rep.MiddleInGC = len(middle), inGC(middle)

	var in, out []time.Duration
	for _, c := range commits {
		if inMark(c) {
			in = append(in, dur(c))
		} else {
			out = append(out, dur(c))
		}
	}
	rep.Commits, rep.CommitsInGC = len(commits), len(in)
	rep.CommitP50, rep.CommitP99 = pct(out, 0.50), pct(out, 0.99)
	rep.InGCP50, rep.InGCP90, rep.InGCP99 = pct(in, 0.50), pct(in, 0.90), pct(in, 0.99)
	return rep, nil
}

// within reports whether a frame of stk is the function fn (its name
// ends with fn).
func within(stk trace.Stack, fn string) bool {
	for fr := range stk.Frames() {
		if strings.HasSuffix(fr.Func, fn) {
			return true
		}
	}
	return false
}

// idleWait reports whether stk is a net/http connection waiting for the
// next request's first bytes: a read under conn.serve's Peek, outside
// any handler.
func idleWait(stk trace.Stack) bool {
	var read, peek, serve, handler bool
	for fr := range stk.Frames() {
		switch {
		case strings.HasSuffix(fr.Func, "poll.(*FD).Read"):
			read = true
		case fr.Func == "bufio.(*Reader).Peek":
			peek = true
		case fr.Func == "net/http.(*conn).serve":
			serve = true
		case strings.HasSuffix(fr.Func, "ServeHTTP"):
			handler = true
		}
	}
	return read && peek && serve && !handler
}
