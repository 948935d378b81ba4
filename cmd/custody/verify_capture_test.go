package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/custody-gateway/custody/verify"
	"github.com/custody-gateway/custody/verify/capture"
)

// TestCaptureTransportWithSDK: an SDK (go-openai; openai-go and
// anthropic-sdk-go take the same *http.Client) through capture.Transport
// against the real binary: the captured bytes of a plain and a streamed
// completion open their receipts' commitments, verified with package
// verify against the gateway's log.
func TestCaptureTransportWithSDK(t *testing.T) {
	t.Parallel() // its own data dir and ports
	dir := t.TempDir()
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants))
	var mu sync.Mutex
	var got []*capture.Exchange
	cfg := openai.DefaultConfig("sk-acme")
	cfg.BaseURL = s.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: &capture.Transport{OnExchange: func(x *capture.Exchange) {
		mu.Lock()
		got = append(got, x)
		mu.Unlock()
	}}}
	c := openai.NewClientWithConfig(cfg)
	ctx := context.Background()
	if _, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "sim-1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "capture me"}}}); err != nil {
		t.Fatal(err)
	}
	st, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "sim-1", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "capture my stream"}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d exchanges captured", len(got))
	}
	src, err := verify.OpenSource(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, vkey := get(t, s.URL+"/log/verifier", "")
	v, err := verify.ParseVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range got {
		if x.RequestID == "" || x.ReceiptPath != "/v1/custody/receipts/"+x.RequestID {
			t.Fatalf("exchange %d: %+v", i, x)
		}
		if i == 1 && !strings.Contains(string(x.Response), ": custody-receipt "+x.RequestID) {
			t.Fatalf("the stream's bytes lack the receipt comment (read to the end?): complete=%v", x.Complete)
		}
		_, body := get(t, s.URL+x.ReceiptPath, "sk-acme")
		r, err := verify.ParseReceipt([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var verr error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, verr = verify.VerifyReceiptWith(ctx, src, v, verify.Options{}, r, x.Request, x.Response)
			if !errors.Is(verr, verify.ErrNotIntegrated) || time.Now().After(deadline) {
				break
			}
		}
		if verr != nil {
			t.Fatalf("exchange %d (%s): %v", i, x.RequestID, verr)
		}
		bad := append([]byte{}, x.Response...)
		bad[len(bad)/3] ^= 1
		if _, err := verify.VerifyReceiptWith(ctx, src, v, verify.Options{}, r, x.Request, bad); !errors.Is(err, verify.ErrInvalid) {
			t.Fatalf("exchange %d: edited response: %v", i, err)
		}
	}
}
