package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const edgeConfig = `
admin_keys: [adm-test]
limits: {max_body_bytes: 65536, read_header_timeout: 1s, read_timeout: 1s, max_concurrent_per_tenant: 2}
tenants:
  - {id: acme, api_keys: [sk-acme]}
providers:
  - {name: sim, kind: sim, request_id_echo: x-request-id}
  - {name: slow, kind: sim, request_id_echo: x-request-id, sim: {token_delay: 50ms}}
models:
  - {name: sim-1, context_window: 32768, routes: [{provider: sim}]}
  - {name: slow-1, context_window: 32768, routes: [{provider: slow}]}
`

// rawRequest writes raw bytes on a fresh connection and reads the status
// line (or reports that the server closed the connection).
func rawRequest(t *testing.T, addr string, parts []string, pause time.Duration) (status string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i, p := range parts {
		if i > 0 {
			time.Sleep(pause)
		}
		if _, err := conn.Write([]byte(p)); err != nil {
			return "closed"
		}
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return "hung"
		}
		return "closed"
	}
	return strings.TrimSpace(line)
}

// TestBadInput sends what hostile or broken clients send and checks each
// gets a clear 4xx (or a closed connection), never a hang or a 5xx, and
// that the server serves normally afterwards.
func TestBadInput(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, edgeConfig))
	url := s.URL + "/v1/chat/completions"
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"malformed", `{"model":"sim-1","messages":[`, 400, "invalid_request"},
		{"not an object", `"just a string"`, 400, "invalid_request"},
		{"empty", ``, 400, "invalid_request"},
		{"deeply nested", `{"model":"sim-1","messages":[{"role":"user","content":"x"}],"x":` + deep + `}`, 400, "invalid_request"},
		{"invalid utf-8", "{\"model\":\"sim-1\",\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}", 400, "invalid_request"},
		{"raw null byte", "{\"model\":\"sim-1\",\"messages\":[{\"role\":\"user\",\"content\":\"a\x00b\"}]}", 400, "invalid_request"},
		{"huge", `{"model":"sim-1","messages":[{"role":"user","content":"` + strings.Repeat("x", 70000) + `"}]}`, 413, "request_too_large"},
		{"wrong types", `{"model":["sim-1"],"messages":{}}`, 400, "invalid_request"},
		{"unknown model", `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, url, "sk-acme", tc.body)
			if resp.StatusCode != tc.status || outcome(resp.StatusCode, body) != tc.code {
				t.Fatalf("%d %.300s", resp.StatusCode, body)
			}
			if strings.Contains(body, "goroutine") || strings.Contains(body, "panic") {
				t.Fatalf("stack trace in the answer: %s", body)
			}
		})
	}
	t.Run("escaped null byte is just text", func(t *testing.T) {
		resp, body := post(t, url, "sk-acme", `{"model":"sim-1","messages":[{"role":"user","content":"a\u0000b"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		resp, body := get(t, url, "sk-acme")
		if resp.StatusCode != 405 || outcome(405, body) != "method_not_allowed" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("truncated body", func(t *testing.T) {
		st := rawRequest(t, s.URL, []string{"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-acme\r\nContent-Length: 500\r\n\r\n{\"model\":\"sim-1\""}, 0)
		if st == "hung" || strings.Contains(st, " 5") {
			t.Fatalf("truncated body: %q\n%s", st, s.stderr)
		}
	})
	t.Run("slow headers", func(t *testing.T) {
		st := rawRequest(t, s.URL, []string{"POST /v1/chat/completions HTTP/1.1\r\n", "Host: x\r\n\r\n"}, 2*time.Second)
		if st != "closed" && !strings.Contains(st, " 4") {
			t.Fatalf("slow headers: %q", st)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		st := rawRequest(t, s.URL, []string{"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-acme\r\nContent-Length: 80\r\n\r\n{\"model\":", "\"sim-1\"}"}, 2*time.Second)
		if st != "closed" && !strings.HasPrefix(st, "HTTP/1.1 4") {
			t.Fatalf("slow body: %q", st)
		}
	})
	t.Run("per-tenant concurrency", func(t *testing.T) {
		var wg sync.WaitGroup
		statuses := make(chan *http.Response, 6)
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, _ := post(t, url, "sk-acme", chatBody("slow-1", "take your time", false))
				statuses <- resp
			}()
		}
		wg.Wait()
		close(statuses)
		limited := 0
		for r := range statuses {
			if r.StatusCode == 429 {
				limited++
				if r.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
			}
		}
		if limited == 0 {
			t.Fatalf("6 concurrent requests against a limit of 2 were all admitted\n%s", s.stderr)
		}
	})
	t.Run("serves normally afterwards", func(t *testing.T) {
		resp, body := post(t, url, "sk-acme", chatBody("sim-1", "still here?", false))
		if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		r, _ := http.Get(s.URL + "/healthz")
		io.Copy(io.Discard, r.Body)
		if r.StatusCode != 200 {
			t.Fatal(fmt.Sprint("healthz ", r.StatusCode))
		}
	})
}
