package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// binary is the custody binary built once for the integration tests: they
// run the real program against the real simulator over real sockets.
var binary string

func TestMain(m *testing.M) {
	// The integration tests mostly wait: on sockets, on the binary's
	// timers, on child processes. Unless -parallel was given, eight of the
	// parallel ones run at once, not GOMAXPROCS (two on a small machine).
	// Eight, not four: the package took 163 s at four and 135 s at six on
	// a quiet machine (once each), and a whole go test ./... beside two
	// spin loops took 353 s at four.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", "8")
	}
	dir, err := os.MkdirTemp("", "custody-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "custody")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic(fmt.Sprintf("building custody: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code != 0 {
		os.Exit(code)
	}
}

// lockedBuffer collects a process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is a running `custody serve`.
type server struct {
	URL     string
	Dir     string // working directory (data lives in Dir/custody-data unless configured)
	cmd     *exec.Cmd
	stdout  *lockedBuffer
	stderr  *lockedBuffer
	t       *testing.T
	waitErr chan error
}

var listening = regexp.MustCompile(`listening\s+(http://[0-9.:]+)`)

// startServe runs `custody serve` in dir with args, and waits for its banner.
func startServe(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	s := &server{Dir: dir, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, t: t, waitErr: make(chan error, 1)}
	s.cmd = exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waitErr <- s.cmd.Wait() }()
	t.Cleanup(s.stop)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(s.stdout.String()); m != nil {
			s.URL = m[1]
			return s
		}
		select {
		case err := <-s.waitErr:
			t.Fatalf("custody serve exited: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("custody serve did not start\nstdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
	return nil
}

// stop interrupts the server and waits for a graceful exit.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.waitErr:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		s.t.Errorf("custody serve did not stop on SIGINT")
	}
	// Built with GOFLAGS=-race, the binary reports races on stderr.
	if strings.Contains(s.stderr.String(), "WARNING: DATA RACE") {
		s.t.Errorf("data race in custody serve:\n%s", s.stderr)
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.waitErr
}

// writeConfig writes a config file into dir.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "custody.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// post sends a JSON body and returns the response with its body read.
func post(t *testing.T, url, key, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	return do(t, "POST", url, key, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, hdr...)...)
}

func get(t *testing.T, url, key string) (*http.Response, string) {
	t.Helper()
	return do(t, "GET", url, key, nil)
}

func do(t *testing.T, method, url, key string, body io.Reader, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// runCmd runs the binary with args, returning exit code and output.
func runCmd(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// sseLines reads an SSE body into its non-empty lines.
func sseLines(body string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines
}
