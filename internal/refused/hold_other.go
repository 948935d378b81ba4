//go:build !linux

package refused

import "net"

// hold is the best a system without bind-only sockets allows: a port
// that was free a moment ago.
func hold() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close()
	return addr, func() {}, nil
}
