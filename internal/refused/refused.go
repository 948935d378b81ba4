// Package refused gives tests an address that refuses connections for as
// long as the test runs.
//
// A port picked free and closed is not that: another test running in
// parallel may listen on it a moment later, and the "dead" upstream then
// answers. A TCP socket bound but never put into listen holds the port
// (no other process can bind it) and the kernel answers every connection
// to it with a reset, exactly as for a port nothing holds.
package refused

import "testing"

// Addr is a loopback host:port that refuses every connection until the
// test ends.
func Addr(t testing.TB) string {
	t.Helper()
	addr, release, err := hold()
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	t.Cleanup(release)
	return addr
}
