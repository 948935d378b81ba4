package upstream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestStaleKeepAliveRetried: an upstream that closes a kept-alive
// connection just as custody sends the next request on it (an engine's
// keep-alive timeout, llama.cpp's and uvicorn's 5 s, racing the reuse)
// answered nothing, so custody sends that request again on a new
// connection instead of failing it as upstream_unavailable. The server
// here answers the first request of each connection and drops the second
// unanswered: before, the second call failed ("provider p is
// unreachable"), once in about 280 requests in TestEnginePassThrough.
func TestStaleKeepAliveRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns, answered atomic.Int64
	var leaked atomic.Bool
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if _, ok := req.Header["Idempotency-Key"]; ok {
						leaked.Store(true) // the marker is the client's, not the wire's
					}
					if n == 1 {
						return // the second request on this connection: dropped, unanswered
					}
					answered.Add(1)
					body := `{"ok":true}`
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
			}()
		}
	}()
	c := New(Config{Name: "p", BaseURL: "http://" + ln.Addr().String() + "/v1"})
	for i := range 3 {
		resp, err := c.Do(context.Background(), Call{Path: "/chat/completions", Body: []byte(`{"model":"m"}`), RequestID: "r"})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "ok") {
			t.Fatalf("call %d: %s", i, b)
		}
	}
	if answered.Load() != 3 || conns.Load() != 3 {
		t.Errorf("%d answers on %d connections, want 3 on 3 (each reuse dropped, each retried anew)", answered.Load(), conns.Load())
	}
	if leaked.Load() {
		t.Error("an Idempotency-Key header went upstream")
	}
}
