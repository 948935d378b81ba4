package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMaxConnections: `custody serve` holds at most limits.max_connections
// client connections; one more waits unanswered until one closes.
func TestMaxConnections(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, `
limits: {max_connections: 3}
tenants: [{id: acme, api_keys: [sk-acme]}]
providers: [{name: sim, kind: sim}]
models: [{name: sim-1, context_window: 8192, routes: [{provider: sim}]}]
`))
	addr := strings.TrimPrefix(s.URL, "http://")
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	time.Sleep(100 * time.Millisecond) // accepted: every slot is taken
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("a fourth connection was answered over max_connections: 3")
	}
	idle[0].Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("not answered once a connection closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
}
