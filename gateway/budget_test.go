package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

// TestBudgetReserveRelease: reservations add up to the budget and no
// further; a release wakes a waiter; a waiter that finds no room in time
// is refused overloaded (Retry-After 1), one whose context ends gets its
// context's error, and neither leaves anything reserved; what can never
// fit is refused at once.
func TestBudgetReserveRelease(t *testing.T) {
	b := NewBudget(100)
	ctx := context.Background()
	if err := b.reserve(ctx, 60); err != nil {
		t.Fatal(err)
	}
	if err := b.reserve(ctx, 40); err != nil {
		t.Fatal(err)
	}
	if got := b.Reserved(); got != 100 {
		t.Fatalf("reserved %d, want 100", got)
	}

	// Full: a waiter gets its bytes when another releases them (its wait
	// is long: only the release can let it through).
	b.setWait(time.Hour)
	got := make(chan error, 1)
	go func() { got <- b.reserve(ctx, 30) }()
	b.release(40)
	if err := <-got; err != nil {
		t.Fatalf("the waiter was not given the released bytes: %v", err)
	}
	if r := b.Reserved(); r != 90 {
		t.Fatalf("reserved %d, want 90", r)
	}

	// No room within the wait: overloaded, nothing taken.
	b.setWait(20 * time.Millisecond)
	err := b.reserve(ctx, 20)
	var e *custody.Error
	if !errors.As(err, &e) || e.Code != custody.CodeOverloaded || e.RetryAfter != 1 {
		t.Fatalf("want overloaded with Retry-After 1, got %v", err)
	}
	if r := b.Reserved(); r != 90 {
		t.Fatalf("a refused reservation kept bytes: %d reserved", r)
	}

	// The waiter's client leaves: its context's error, nothing taken.
	b.setWait(time.Hour)
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- b.reserve(cctx, 20) }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if r := b.Reserved(); r != 90 {
		t.Fatalf("a cancelled reservation kept bytes: %d reserved", r)
	}

	// More than the whole budget: refused without waiting.
	if err := b.reserve(ctx, 101); custody.CodeOf(err) != custody.CodeOverloaded {
		t.Fatalf("want overloaded for more than the budget, got %v", err)
	}

	// A hold grows and frees whole.
	b.release(90)
	h := b.hold(ctx, new(hold))
	for _, n := range []int64{10, 5, 50, 50} {
		if err := h.upTo(n); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.Reserved(); r != 50 {
		t.Fatalf("a hold grown to 50 reserved %d", r)
	}
	h.free()
	h.free()
	if r := b.Reserved(); r != 0 {
		t.Fatalf("freed hold left %d reserved", r)
	}

	// A smaller budget (a reload) takes nothing new until enough is
	// released.
	b.setWait(20 * time.Millisecond)
	b.reserve(ctx, 80)
	b.SetMax(50)
	if err := b.reserve(ctx, 1); custody.CodeOf(err) != custody.CodeOverloaded {
		t.Fatalf("over a lowered budget: %v", err)
	}
	b.release(80)
	if err := b.reserve(ctx, 50); err != nil {
		t.Fatal(err)
	}
}

// memConfig is testConfig with small memory bounds.
var memConfig = strings.Replace(testConfig, "limits: {max_body_bytes: 4096}",
	"limits: {max_body_bytes: 4096, max_response_bytes: 20000, max_event_bytes: 4096, max_inflight_bytes: 100000}", 1)

// servedHarness is a harness whose server says when each exchange has
// returned (and so released what it held).
func servedHarness(t *testing.T, yaml string) (*harness, chan struct{}) {
	h := newHarness(t, yaml)
	done := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.gw.ServeHTTP(w, r)
		done <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	h.srv = srv
	return h, done
}

// bigChunk is a chat chunk event whose content is n bytes.
func bigChunk(id string, n int) string {
	return fmt.Sprintf("data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n",
		id, strings.Repeat("x", n))
}

// TestResponseSizeLimits: a plain answer over limits.max_response_bytes
// is refused 502 response_too_large, whether its Content-Length says so
// or it is read to past the bound; a stream with an event over
// limits.max_event_bytes is ended with one response_too_large error
// event and no [DONE]; each is recorded with the code, and answers under
// the bounds are served. Nothing stays reserved after any of them.
func TestResponseSizeLimits(t *testing.T) {
	h, done := servedHarness(t, memConfig)
	ask := func(stream bool) (*http.Response, string) {
		t.Helper()
		resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", stream))
		<-done
		if r := h.gw.Inflight().Reserved(); r != 0 {
			t.Errorf("%d bytes still reserved after the exchange", r)
		}
		return resp, body
	}
	tooLarge := func(name string, resp *http.Response, body string, stream bool) {
		t.Helper()
		if stream {
			if resp.StatusCode != 200 || strings.Count(body, `"error"`) != 1 || !strings.Contains(body, `"code":"response_too_large"`) ||
				!strings.Contains(body, "max_event_bytes") || strings.Contains(body, "[DONE]") {
				t.Errorf("%s: want one response_too_large event and no [DONE]: %d ...%s", name, resp.StatusCode, body[max(0, len(body)-400):])
			}
		} else if resp.StatusCode != 502 || errCode(t, body) != "response_too_large" || !strings.Contains(body, "max_response_bytes") {
			t.Errorf("%s: want 502 response_too_large: %d %.300s", name, resp.StatusCode, body)
		}
		if tx := h.rec.last(t); tx.Verdict != custody.Rejected || tx.Code != custody.CodeResponseTooLarge ||
			!strings.Contains(tx.ChecksHeader(), "upstream=response_too_large") {
			t.Errorf("%s: recorded %s %s %s", name, tx.Verdict, tx.Code, tx.ChecksHeader())
		}
	}

	// Plain, chunked: read to past the bound.
	if resp, body := ask(false); resp.StatusCode != 200 {
		t.Fatalf("a small answer: %d %s", resp.StatusCode, body)
	}
	h.primary.mutate = func(resp map[string]any, _ *http.Request) {
		resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = strings.Repeat("y", 30000)
	}
	resp, body := ask(false)
	tooLarge("plain, chunked", resp, body, false)
	h.primary.mutate = func(resp map[string]any, _ *http.Request) {
		resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = strings.Repeat("y", 15000)
	}
	if resp, body := ask(false); resp.StatusCode != 200 {
		t.Errorf("an answer under max_response_bytes: %d %.300s", resp.StatusCode, body)
	}
	h.primary.mutate = nil

	// Streams: an event over the bound, and one under it.
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, bigChunk(id, 10))
		io.WriteString(w, bigChunk(id, 5000))
		io.WriteString(w, "data: [DONE]\n\n")
	}
	resp, body = ask(true)
	tooLarge("stream", resp, body, true)
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, bigChunk(id, 3000))
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", id)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1,\"total_tokens\":%d}}\n\n", id, usage, usage+1)
		io.WriteString(w, "data: [DONE]\n\n")
	}
	if resp, body := ask(true); resp.StatusCode != 200 || !strings.Contains(body, "[DONE]") || strings.Contains(body, `"error"`) {
		t.Errorf("a stream of events under max_event_bytes: %d ...%s", resp.StatusCode, body[max(0, len(body)-400):])
	}

	// Plain, with a Content-Length over the bound: refused unread.
	sized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // so that the server sees the connection close
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		w.WriteHeader(200)
		io.WriteString(w, `{"id":"x",`) // and never the rest
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer sized.Close()
	h2, done2 := servedHarness(t, strings.Replace(memConfig, `base_url: "PRIMARY"`, `base_url: "`+sized.URL+`/v1"`, 1))
	resp, body = h2.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false))
	<-done2
	if resp.StatusCode != 502 || errCode(t, body) != "response_too_large" {
		t.Errorf("a Content-Length over the bound: %d %s", resp.StatusCode, body)
	}
	if r := h2.gw.Inflight().Reserved(); r != 0 {
		t.Errorf("%d bytes still reserved", r)
	}
}

// TestInflightBudget: while a stream holds the in-flight budget, a new
// request waits for room and, finding none, is refused 503 overloaded
// with Retry-After: 1 in the dialect's error shape, recorded, and never
// forwarded; a client that leaves while waiting, a stream ended by its
// client and one ended by its upstream each give back all they held; once
// the stream is done, requests are served again.
func TestInflightBudget(t *testing.T) {
	h, done := servedHarness(t, memConfig)
	h.gw.Inflight().setWait(50 * time.Millisecond)
	hold, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, bigChunk(id, 10))
		w.(http.Flusher).Flush()
		hold <- struct{}{}
		<-release
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", id)
		fmt.Fprintf(w, "data: {\"id\":%q,\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"small\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":1,\"total_tokens\":%d}}\n\n", id, usage, usage+1)
		io.WriteString(w, "data: [DONE]\n\n")
	}
	streamed := make(chan string, 1)
	go func() {
		_, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", true))
		streamed <- body
	}()
	<-hold // the stream is in flight, holding the first read's room and more
	if r := h.gw.Inflight().Reserved(); r < firstReserve {
		t.Fatalf("a stream in flight reserves %d", r)
	}
	calls := h.primary.calls.Load()

	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		body := chat("small", "hi", false)
		if path == "/v1/messages" {
			body = `{"model":"small","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
		}
		resp, out := h.do("POST", path, "sk-acme", body, "anthropic-version", "2023-06-01")
		<-done
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(out, "overloaded") {
			t.Errorf("%s over the budget: %d Retry-After %q %s", path, resp.StatusCode, resp.Header.Get("Retry-After"), out)
		}
		if path == "/v1/messages" && !strings.Contains(out, `"type":"error"`) {
			t.Errorf("not the Messages error shape: %s", out)
		}
		if tx := h.rec.last(t); tx.Code != custody.CodeOverloaded || !strings.Contains(tx.ChecksHeader(), "limit=overloaded") {
			t.Errorf("%s: recorded %s %s", path, tx.Code, tx.ChecksHeader())
		}
	}
	if n := h.primary.calls.Load(); n != calls {
		t.Errorf("a refused request was forwarded (%d calls, %d before)", n, calls)
	}

	// A client that gives up while waiting takes nothing.
	before := h.gw.Inflight().Reserved()
	h.gw.Inflight().setWait(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "hi", false)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	gone := make(chan struct{})
	go func() {
		if resp, err := h.srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
		close(gone)
	}()
	for h.gw.Inflight().waiting() == 0 {
		time.Sleep(time.Millisecond) // until the request waits for room
	}
	cancel()
	<-gone
	<-done
	if r := h.gw.Inflight().Reserved(); r != before {
		t.Errorf("a client gone while waiting changed the reservations: %d, was %d", r, before)
	}
	h.gw.Inflight().setWait(50 * time.Millisecond)

	once.Do(func() { close(release) })
	if body := <-streamed; !strings.Contains(body, "[DONE]") {
		t.Errorf("the held stream: %s", body)
	}
	<-done
	if r := h.gw.Inflight().Reserved(); r != 0 {
		t.Fatalf("%d bytes reserved after the stream ended", r)
	}
	if resp, out := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false)); resp.StatusCode != 200 {
		t.Errorf("with room again: %d %s", resp.StatusCode, out)
	}
	<-done

	// A stream whose client leaves mid-way gives back what it held.
	hold2 := make(chan struct{})
	h.primary.stream = func(w io.Writer, id string, usage int) {
		io.WriteString(w, bigChunk(id, 3000))
		w.(http.Flusher).Flush()
		close(hold2)
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, bigChunk(id, 3000)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			if i > 10000 {
				return
			}
		}
	}
	ctx, cancel = context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/v1/chat/completions", strings.NewReader(chat("small", "hi", true)))
	req.Header.Set("Authorization", "Bearer sk-acme")
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-hold2
	cancel()
	resp.Body.Close()
	<-done
	if r := h.gw.Inflight().Reserved(); r != 0 {
		t.Errorf("%d bytes reserved after a client left mid-stream", r)
	}
}
