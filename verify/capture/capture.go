// Package capture hands an application the exact bytes its HTTP client
// sent to custody and received back, streams included, with the receipt
// id: what verify.VerifyReceipt needs to open a receipt's commitments.
// Transport is an http.RoundTripper, so it fits any SDK that takes an
// *http.Client: openai-go (option.WithHTTPClient), anthropic-sdk-go
// (option.WithHTTPClient), sashabaranov/go-openai (ClientConfig.HTTPClient).
// It changes nothing the SDK sees. Standard library only.
package capture

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// Exchange is one request and its response.
type Exchange struct {
	Method, URL string
	Status      int
	// RequestID is the Custody-Request-Id header: the receipt id.
	RequestID string
	// ReceiptPath is the Custody-Receipt header: the receipt's path on the
	// gateway (GET it with the same credentials).
	ReceiptPath string
	// Request is the exact request body (nil if none).
	Request []byte
	// Response is the exact response body as far as the client read it;
	// Complete says it read it to the end (a stream to its last byte).
	Response []byte
	Complete bool
}

// Transport records every exchange through Base (nil:
// http.DefaultTransport) and calls OnExchange once its response body has
// been read to the end or closed, whichever comes first: for a plain
// call, before the SDK returns; for a stream, when it ends.
type Transport struct {
	Base       http.RoundTripper
	OnExchange func(*Exchange)
}

var _ http.RoundTripper = (*Transport)(nil)

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	x := &Exchange{Method: req.Method, URL: req.URL.String()}
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		x.Request = b
		// RoundTrippers must not modify the request: send a copy whose
		// body replays the bytes read.
		r2 := req.Clone(req.Context())
		r2.Body = io.NopCloser(bytes.NewReader(b))
		r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		r2.ContentLength = int64(len(b))
		req = r2
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	x.Status = resp.StatusCode
	x.RequestID = resp.Header.Get("Custody-Request-Id")
	x.ReceiptPath = resp.Header.Get("Custody-Receipt")
	resp.Body = &tee{body: resp.Body, x: x, done: t.OnExchange}
	return resp, nil
}

// tee copies what the client reads of a response body.
type tee struct {
	body io.ReadCloser
	x    *Exchange
	buf  bytes.Buffer
	once sync.Once
	done func(*Exchange)
}

func (r *tee) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	r.buf.Write(p[:n])
	if err == io.EOF {
		r.finish(true)
	}
	return n, err
}

func (r *tee) Close() error {
	err := r.body.Close()
	r.finish(false)
	return err
}

func (r *tee) finish(complete bool) {
	r.once.Do(func() {
		r.x.Response, r.x.Complete = r.buf.Bytes(), complete
		if r.done != nil {
			r.done(r.x)
		}
	})
}
