package gateway

import (
	"net"
	"sync"
)

// LimitListener returns l bounded to n connections open at once (n <= 0:
// l itself). At the limit, Accept waits for a connection to close before
// taking the next one from the kernel, so excess connections wait in the
// listen backlog, unanswered and costing custody nothing, rather than
// being accepted and dropped; once the backlog is full the kernel refuses
// them. Idle keep-alives hold a slot until the server's IdleTimeout
// closes them.
func LimitListener(l net.Listener, n int) net.Listener {
	if n <= 0 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	closed    chan struct{} // closed by Close: a waiting Accept returns
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, on its first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
