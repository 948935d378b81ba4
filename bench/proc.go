package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// child is a bench process serving one role.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	URL   string // http://127.0.0.1:port
	PProf string // the profiler's base URL (custody only)
	log   string // its stderr
}

// startChild re-executes this binary in role with env, and waits until it
// says it is ready.
func startChild(name, role, logDir string, env ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{name: name, log: filepath.Join(logDir, name+".log")}
	errf, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	c.cmd = exec.Command(exe)
	c.cmd.Env = append(append(os.Environ(), roleEnv+"="+role), env...)
	c.cmd.Stderr = errf
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				c.stop()
				return nil, fmt.Errorf("%s exited before it was ready: %s", name, c.tail())
			}
			switch k, v, _ := strings.Cut(l, " "); k {
			case "addr":
				c.URL = v
			case "pprof":
				c.PProf = v
			case "ready":
				go func() {
					for range lines {
					}
				}()
				return c, nil
			}
		case <-timeout:
			c.stop()
			return nil, fmt.Errorf("%s was not ready in 60s: %s", name, c.tail())
		}
	}
}

// stop closes the child's stdin (it shuts down) and waits for it.
func (c *child) stop() {
	c.stdin.Close()
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
	return s, nil
}

func (c *child) proc() (procStat, error) { return readProc(c.cmd.Process.Pid) }
