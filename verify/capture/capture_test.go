package capture

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTransportCapturesExactBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Custody-Request-Id", "req-1")
		w.Header().Set("Custody-Receipt", "/v1/custody/receipts/req-1")
		w.Write([]byte("data: {\"echo\":"))
		w.(http.Flusher).Flush()
		w.Write(body)
		w.Write([]byte("}\n\n: custody-receipt req-1\n\n"))
	}))
	defer srv.Close()
	var got []*Exchange
	c := &http.Client{Transport: &Transport{OnExchange: func(x *Exchange) { got = append(got, x) }}}
	sent := []byte("{\"a\": 1,\n \"b\":\"\u00e9\"}")
	resp, err := c.Post(srv.URL, "application/json", bytes.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	read, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 1 {
		t.Fatalf("%d exchanges", len(got))
	}
	x := got[0]
	if !bytes.Equal(x.Request, sent) || !bytes.Equal(x.Response, read) || !x.Complete || x.RequestID != "req-1" || x.ReceiptPath != "/v1/custody/receipts/req-1" || x.Status != 200 {
		t.Fatalf("exchange %+v", x)
	}
	if !strings.Contains(string(read), string(sent)) {
		t.Fatal("the server did not get the body")
	}

	// A body closed early is reported as incomplete, with what was read.
	got = nil
	resp, err = c.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 3)
	io.ReadFull(resp.Body, p)
	resp.Body.Close()
	if len(got) != 1 || got[0].Complete || string(got[0].Response) != "dat" {
		t.Fatalf("early close: %+v", got)
	}
}
