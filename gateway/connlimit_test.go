package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestLimitListener: with a limit of 2, a third connection is not
// answered while two are open (idle ones included), and is served as
// soon as one of them closes.
func TestLimitListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(LimitListener(ln, 2))
	defer srv.Close()
	addr := ln.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	get := func(c net.Conn, wait time.Duration) (string, error) {
		c.SetDeadline(time.Now().Add(wait))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return "", err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	first, second := dial(), dial()
	if got, err := get(first, 5*time.Second); got != "ok" {
		t.Fatalf("first connection: %q %v", got, err)
	}
	_ = second // open and idle: it holds its slot
	time.Sleep(50 * time.Millisecond)

	third := dial()
	if got, err := get(third, 300*time.Millisecond); err == nil {
		t.Fatalf("a third connection was served over the limit: %q", got)
	}
	first.Close()
	// The request already sent on the third connection is now read.
	third.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("the third connection was not served after one closed: %v", err)
	}
	resp.Body.Close()

	// Close returns an Accept that is waiting for a slot.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	lim := LimitListener(ln2, 1)
	c, _ := net.Dial("tcp", ln2.Addr().String())
	defer c.Close()
	if _, err := lim.Accept(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := lim.Accept(); done <- err }()
	lim.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Accept after Close returned a connection")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close left Accept waiting")
	}
}
