package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamFlushesBeforeWaiting: custody flushes what it has relayed
// before it waits for the upstream again, and only then. The upstream
// sends a first event, then eight in one write, then holds the stream
// until the client has seen all nine: so none of them may wait in
// custody's buffer for the upstream's next bytes (that would hang the
// test). And the eight that came in one read went out in one flush, not
// eight: a flush is a write syscall, which was half the CPU of relaying
// a stream (BenchmarkProxyPathStream).
func TestStreamFlushesBeforeWaiting(t *testing.T) {
	h := newHarness(t, testConfig)
	seen := make(chan struct{})
	h.primary.stream = func(w io.Writer, id string, usage int) {
		chunk := func(content string) string {
			return fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", id, content)
		}
		io.WriteString(w, chunk("w0"))
		w.(http.Flusher).Flush()
		var burst strings.Builder
		for i := 1; i <= 8; i++ {
			burst.WriteString(chunk(fmt.Sprintf(" w%d", i)))
		}
		io.WriteString(w, burst.String())
		w.(http.Flusher).Flush()
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			return // custody held events back: the client's wait fails the test
		}
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", id)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":9,\"total_tokens\":%d}}\n\n", id, usage, usage+9)
		io.WriteString(w, "data: [DONE]\n\n")
	}
	pr, pw := io.Pipe()
	w := &flushCounter{header: http.Header{}, w: pw}
	req, _ := http.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chat("small", "hi", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.gw.ServeHTTP(w, req)
		w.push()
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	got := 0
	var flushesForNine int64
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `" w`) || strings.Contains(sc.Text(), `"w0"`) {
			if got++; got == 9 {
				flushesForNine = w.flushes.Load()
				close(seen)
			}
		}
	}
	<-served
	if got != 9 {
		t.Fatalf("the client saw %d of the 9 content events", got)
	}
	// The first event's flush and the burst's: two (one more if the
	// burst came in two reads). One flush an event would be nine.
	if flushesForNine > 3 {
		t.Errorf("%d flushes for 9 events that came in 2 writes: one an event, not one a read", flushesForNine)
	}
	// The final verdict is set on the header after the body, as trailers.
	if v := w.header.Get("Custody-Verdict"); v != "verified" {
		t.Errorf("stream verdict %q", v)
	}
}

// flushCounter is a ResponseWriter that holds what is written until a
// flush, as a server's buffered connection does, then passes it to a
// pipe; it counts the flushes.
type flushCounter struct {
	header  http.Header
	w       *io.PipeWriter
	buf     []byte
	flushes atomic.Int64
	status  int
}

func (f *flushCounter) Header() http.Header { return f.header }
func (f *flushCounter) WriteHeader(code int) {
	if f.status == 0 {
		f.status = code
	}
}
func (f *flushCounter) Write(b []byte) (int, error) {
	if f.status == 0 {
		f.status = http.StatusOK
	}
	f.buf = append(f.buf, b...)
	return len(b), nil
}
func (f *flushCounter) Flush() {
	f.flushes.Add(1)
	f.push()
}

// push passes what is held to the pipe: at a flush, and when the
// handler returns.
func (f *flushCounter) push() {
	b := f.buf
	f.buf = nil
	f.w.Write(b)
}
