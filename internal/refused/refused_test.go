package refused

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestAddrRefusesAndHolds: a connection to the address is refused, and
// no listener can take the port while the test holds it.
func TestAddrRefusesAndHolds(t *testing.T) {
	addr := Addr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("a connection to %s was accepted", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("another listener took %s", addr)
	}
}
