//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// The load of TestResponseMemoryIsBounded: memStreams streams of
// memBigEvents events of almost 8 MiB each (under the reader's old fixed
// 8 MiB cap), and two plain answers of about 60 MB (under the old fixed
// 64 MiB cap), all at once.
const (
	memStreams   = 8
	memBigEvents = 3
	memPlainSize = 60 << 20
	memEventSize = 8<<20 - 4<<10
	// memBound is the custody process's peak RSS allowed (VmHWM). Before
	// the bounds, this load took about 1.4 GB (measured: see the commit).
	memBound = 300 << 20
)

// memText is n bytes of plain words (no JSON escapes, no canary).
func memText(n int) []byte {
	const words = "the quick brown fox jumps over the lazy dog while seven tall ships sail past "
	b := bytes.Repeat([]byte(words), n/len(words)+1)
	return b[:n]
}

// memUpstream serves, to a stream, one small chunk and then memBigEvents
// chunks of almost 8 MiB each, then a finish and [DONE]; to a plain
// request, one answer of about 60 MB, with a Content-Length when the
// prompt says "sized" and chunked otherwise.
func memUpstream(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	text := memText(memEventSize)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := "c" + strconv.FormatInt(n.Add(1), 10)
		usage := `"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}`
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			content := memText(memPlainSize)
			if bytes.Contains(body, []byte("small")) {
				content = []byte("a small answer")
			}
			out := []byte(`{"id":"` + id + `","object":"chat.completion","created":1,"model":"up-1","choices":[{"index":0,"message":{"role":"assistant","content":"` +
				string(content) + `"},"finish_reason":"stop"}],` + usage + `}`)
			w.Header().Set("Content-Type", "application/json")
			if bytes.Contains(body, []byte("sized")) {
				w.Header().Set("Content-Length", strconv.Itoa(len(out)))
				w.Write(out)
				return
			}
			for len(out) > 0 { // chunked, in pieces
				k := min(len(out), 1<<20)
				if _, err := w.Write(out[:k]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				out = out[k:]
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string) string {
			return `data: {"id":"` + id + `","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
		}
		if _, err := io.WriteString(w, chunk(`{"role":"assistant","content":"hi"}`)); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		for range memBigEvents {
			if _, err := io.WriteString(w, chunk(`{"content":"`+string(text)+`"}`)); err != nil {
				return // custody refused the stream
			}
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, `data: {"id":"`+id+`","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"`+id+`","object":"chat.completion.chunk","created":1,"model":"up-1","choices":[],`+usage+`}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// vmHWM is the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/pid/status")
	return 0
}

// TestResponseMemoryIsBounded: the real binary, with its default limits,
// in front of an upstream that sends streams of almost-8-MiB events and
// plain answers of 60 MB, all at once. Each stream ends with one
// response_too_large error event (over limits.max_event_bytes) and each
// plain answer is refused 502 response_too_large (over
// limits.max_response_bytes), recorded; custody's peak RSS stays under
// memBound (it was about 1.4 GB), and once they are done no bytes are
// left reserved in custody_inflight_bytes and a small request is served.
func TestResponseMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves about 300 MB through the binary")
	}
	up := memUpstream(t)
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, fmt.Sprintf(`checks: {contamination_warmup: -1}
canaries: {ignore_path_changes: true}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: big, kind: openai, base_url: %q, engine: openai}
models:
  - {name: chat, context_window: 32768, routes: [{provider: big, model: up-1}]}
`, up)))
	base := vmHWM(t, s.cmd.Process.Pid)

	type result struct {
		status int
		body   string
		id     string
	}
	results := make([]result, memStreams+2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := i < memStreams
			prompt := fmt.Sprintf("request %d", i)
			if i == memStreams {
				prompt += " sized"
			}
			body := fmt.Sprintf(`{"model":"chat","stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, prompt)
			req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-acme")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			// Only the end of a body is kept: a relayed 8 MiB event is
			// not the test's to hold.
			var tail tailBuffer
			io.Copy(&tail, resp.Body)
			results[i] = result{resp.StatusCode, tail.String(), resp.Header.Get("Custody-Request-Id")}
		}()
	}
	wg.Wait()
	peak := vmHWM(t, s.cmd.Process.Pid)
	t.Logf("custody's peak RSS (VmHWM): %d MB (%d MB at start), %d streams of %d events of %d bytes and 2 plain answers of %d bytes",
		peak>>20, base>>20, memStreams, memBigEvents, memEventSize, memPlainSize)

	for i, r := range results {
		code := string(codeTooLarge)
		if i < memStreams {
			if r.status != 200 || !strings.Contains(r.body, `"code":"`+code+`"`) || strings.Contains(r.body, "[DONE]") {
				t.Errorf("stream %d: %d, not ended with one %s event: ...%.300s", i, r.status, code, r.body)
			}
		} else if r.status != 502 || !strings.Contains(r.body, `"code":"`+code+`"`) {
			t.Errorf("plain %d: %d, want 502 %s: %.300s", i, r.status, code, r.body)
		}
		if r.id != "" {
			leafHas(t, s, "sk-acme", r.id, codeTooLarge)
		}
	}
	if peak > memBound {
		t.Errorf("custody's peak RSS was %d MB, over %d MB", peak>>20, memBound>>20)
	}
	// A handler releases its reservation as it returns, a moment after
	// its client read the end.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, metrics := get(t, s.URL+"/metrics", "")
		v := sumMetric(metrics, "custody_inflight_bytes ")
		if strings.Contains(metrics, "\ncustody_inflight_bytes ") && v == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("custody_inflight_bytes is %v with nothing in flight: a reservation leaked (or no such gauge)", v)
		}
	}
	resp, out := post(t, s.URL+"/v1/chat/completions", "sk-acme", `{"model":"chat","messages":[{"role":"user","content":"small"}]}`)
	if resp.StatusCode != 200 {
		t.Errorf("after the load: %d %.300s", resp.StatusCode, out)
	}
}

// codeTooLarge is the refusal of an answer over custody's bounds.
const codeTooLarge = custody.Code("response_too_large")

// tailBuffer keeps the last 64 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-64<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
