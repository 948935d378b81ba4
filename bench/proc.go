package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// child is a bench process serving one role, or a `custody serve`.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	serve bool   // a `custody serve`: stopped by SIGINT, not by closing stdin
	URL   string // http://127.0.0.1:port
	PProf string // the profiler's base URL (custody children only)
	// Syncs is the URL whose body has the custody_ledger_fsyncs_total
	// line (the durable modes only).
	Syncs string
	log   string // its stderr
}

// childSpec says how to start a child.
type childSpec struct {
	name   string
	role   string   // re-execute this binary in role (when argv is nil)
	argv   []string // else run this command
	env    []string
	cpus   string // taskset CPU list to pin it to; "" runs it unpinned
	logDir string
}

// listeningLine is how `custody serve` announces its address.
var listeningLine = regexp.MustCompile(`listening\s+(http://[0-9.:]+)`)

// startChild starts spec and waits until it says it is ready: a role
// child prints "addr URL", "pprof URL" and "ready"; a serve prints its
// banner.
func startChild(spec childSpec) (*child, error) {
	c := &child{name: spec.name, log: filepath.Join(spec.logDir, spec.name+".log"), serve: spec.argv != nil}
	argv := spec.argv
	if argv == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		argv = []string{exe}
		spec.env = append(spec.env, roleEnv+"="+spec.role)
	}
	if spec.cpus != "" {
		// taskset execs the command: the pid is the target's own, so its
		// /proc figures are too.
		argv = append([]string{"taskset", "-c", spec.cpus}, argv...)
	}
	errf, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Env = append(os.Environ(), spec.env...)
	c.cmd.Stderr = errf
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.name, err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	drain := func() {
		go func() {
			for range lines {
			}
		}()
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				c.stop()
				return nil, fmt.Errorf("%s exited before it was ready: %s", c.name, c.tail())
			}
			if c.serve {
				if m := listeningLine.FindStringSubmatch(l); m != nil {
					c.URL, c.PProf, c.Syncs = m[1], m[1], m[1]+"/metrics"
					drain()
					return c, nil
				}
				continue
			}
			switch k, v, _ := strings.Cut(l, " "); k {
			case "addr":
				c.URL = v
			case "pprof":
				c.PProf = v
			case "syncs":
				c.Syncs = v
			case "ready":
				drain()
				return c, nil
			}
		case <-timeout:
			c.stop()
			return nil, fmt.Errorf("%s was not ready in 60s: %s", c.name, c.tail())
		}
	}
}

// stop ends the child gracefully (a role child when its stdin closes, a
// serve on SIGINT) and waits for it.
func (c *child) stop() {
	c.stdin.Close()
	if c.serve {
		c.cmd.Process.Signal(os.Interrupt)
	}
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

func (c *child) tail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// procStat is what /proc tells of a process.
type procStat struct {
	CPU   time.Duration // user + system, all threads
	HWMkB int64         // peak resident set (VmHWM)
	RSSkB int64         // current resident set (VmRSS)
	// Wait is the time its threads were runnable but waiting for a CPU
	// (the second field of /proc/<pid>/task/*/schedstat, summed): on a
	// machine shared with other work, what the CPU time cannot show.
	Wait time.Duration
}

// clockTick is USER_HZ, 100 on every Linux ABI Go supports.
const clockTick = 10 * time.Millisecond

func readProc(pid int) (procStat, error) {
	var s procStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line, 12 and 13 after the name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return s, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return s, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	s.CPU = time.Duration(ut+st) * clockTick
	st2, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(st2), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			s.HWMkB = n
		case "VmRSS":
			s.RSSkB = n
		}
	}
	s.Wait = schedWait(pid)
	return s, nil
}

// schedWait sums the run-queue wait of pid's threads (0 where the
// kernel keeps no schedstats).
func schedWait(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}

func (c *child) proc() (procStat, error) { return readProc(c.cmd.Process.Pid) }
