package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAmbiguousFramingClosesConnection: after a request framed by
// Transfer-Encoding, which may also have carried a Content-Length (Go's
// server deletes it before custody sees the request), the connection is
// closed, as RFC 9112 §6.1 requires: bytes the client framed one way are
// never read as a second request the other way (request smuggling).
func TestAmbiguousFramingClosesConnection(t *testing.T) {
	h := newHarness(t, testConfig)
	body := chat("small", "hi", false)
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-acme\r\nContent-Type: application/json\r\n"
	for _, c := range []struct {
		name, req string
		status    int // 0: any
	}{
		// The body is chunked: served by Transfer-Encoding alone.
		{"both, body chunked", head + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body), 0},
		// The body is framed by Content-Length: not valid chunked, refused.
		{"both, body by length", head + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n", len(body)) + body, 400},
		{"chunked only", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(body), 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			// A second, well-formed request pipelined behind it must not be served.
			second := "GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-acme\r\n\r\n"
			if _, err := io.WriteString(conn, c.req+second); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no response: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			if c.status != 0 && resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
			if !resp.Close {
				t.Errorf("response does not say Connection: close")
			}
			if rest, err := br.ReadByte(); err != io.EOF {
				t.Errorf("connection left open after the response (read %q, %v)", rest, err)
			}
		})
	}
}

func chunked(s string) string { return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(s), s) }
