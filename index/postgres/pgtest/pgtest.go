// Package pgtest gives tests outside package postgres what they need to
// run against the test server: a schema of their own, and a connection
// they can cut (an index outage).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Schema creates a schema with a random name, dropped at cleanup, and
// returns a postgres:// DSN whose search_path is that schema. Without a
// server the test is skipped, unless CUSTODY_REQUIRE_POSTGRES is set.
// CUSTODY_TEST_POSTGRES (a postgres:// URL) names the server.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("CUSTODY_TEST_POSTGRES")
	if dsn == "" {
		dsn = defaultDSN
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if os.Getenv("CUSTODY_REQUIRE_POSTGRES") != "" {
			t.Fatalf("postgres unreachable and CUSTODY_REQUIRE_POSTGRES is set: %v", err)
		}
		t.Skipf("postgres unreachable (set CUSTODY_TEST_POSTGRES, or CUSTODY_REQUIRE_POSTGRES to fail): %v", err)
	}
	defer c.Close(ctx)
	var b [8]byte
	rand.Read(b[:])
	name := "custody_test_" + hex.EncodeToString(b[:])
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return WithSearchPath(dsn, name)
}

// WithSearchPath adds search_path, which pgx passes to the server as a
// run-time parameter, to a URL or key=value DSN.
func WithSearchPath(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(dsn) + " search_path=" + name
}

// Proxy forwards TCP connections to the server of dsn until Cut.
type Proxy struct {
	ln    net.Listener
	mu    sync.Mutex // guards conns, cut
	conns []net.Conn
	cut   bool
}

// NewProxy starts a proxy to dsn's server and returns dsn rewritten to
// go through it. It is cut at cleanup.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln}
	target := u.Host
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			if !p.track(c, s) {
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.Cut)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

// Cut closes the listening port and every connection through it: the
// server is unreachable from then on.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
