package notify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
)

func TestDeliverySignedAndRetried(t *testing.T) {
	var (
		mu       sync.Mutex
		got      []string
		attempts atomic.Int32
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if attempts.Add(1) == 1 {
			w.WriteHeader(503) // the first delivery fails: it must be retried
			return
		}
		if err := Verify("s3cret", r.Header.Get("Custody-Signature"), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		mu.Lock()
		got = append(got, r.Header.Get("Custody-Event")+" "+string(body))
		mu.Unlock()
	}))
	defer recv.Close()
	n := New(Config{Hooks: []Hook{{URL: recv.URL, Secret: "s3cret", Events: []string{"fallback", "path_change"}}}, Backoff: 10 * time.Millisecond})
	n.Notify(custody.Event{Type: "fallback", Model: "m", Detail: "primary>backup", Time: time.Now()})
	n.Notify(custody.Event{Type: "violation", Model: "m"}) // not subscribed
	n.Notify(custody.Event{Type: "path_change", Model: "m", Detail: "p|m-0901|fp2"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n.Close(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !strings.HasPrefix(got[0], "fallback ") || !strings.Contains(got[0], `"detail":"primary>backup"`) || !strings.HasPrefix(got[1], "path_change ") {
		t.Fatalf("delivered %q after %d attempts", got, attempts.Load())
	}
}

func TestVerifyRefusesForgeries(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"fallback"}`)
	good := Sign("k", now, body)
	for _, tc := range []struct {
		name, secret, header string
		body                 []byte
		at                   time.Time
		ok                   bool
	}{
		{"good", "k", good, body, now, true},
		{"other secret", "x", good, body, now, false},
		{"edited body", "k", good, []byte(`{"type":"violation"}`), now, false},
		{"too old", "k", good, body, now.Add(10 * time.Minute), false},
		{"malformed", "k", "v1=zz", body, now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.secret, tc.header, tc.body, tc.at, 5*time.Minute)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestNotifyNeverBlocks(t *testing.T) {
	block := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer recv.Close()
	defer close(block)
	n := New(Config{Hooks: []Hook{{URL: recv.URL}}, Queue: 4, Attempts: 1})
	start := time.Now()
	for range 100 {
		n.Notify(custody.Event{Type: "violation"})
	}
	if time.Since(start) > time.Second {
		t.Fatal("Notify blocked on a stuck receiver")
	}
	if n.Dropped() == 0 {
		t.Fatal("a full queue dropped nothing")
	}
}
