package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAdminKeyGuessesLimited: past limits.auth_failures_per_minute wrong
// admin keys, every admin request from that IP (the right key too) gets
// 429 rate_limited with Retry-After; tenants' requests are not affected.
func TestAdminKeyGuessesLimited(t *testing.T) {
	h := newHarness(t, strings.Replace(testConfig, "limits: {max_body_bytes: 4096}", "limits: {max_body_bytes: 4096, auth_failures_per_minute: 3}", 1))
	// An admin endpoint mounted beside the API (the admin API, the
	// profiler) asks for the key through AdminOnly.
	admin := httptest.NewServer(h.gw.AdminOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	t.Cleanup(admin.Close)
	get := func(key string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", admin.URL+"/admin", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := admin.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for i := range 3 {
		if resp, body := get("guess-" + strconv.Itoa(i)); resp.StatusCode != 401 {
			t.Fatalf("guess %d: %d %s", i, resp.StatusCode, body)
		}
	}
	for _, key := range []string{"guess-4", "adm-1"} {
		resp, body := get(key)
		if resp.StatusCode != 429 || errCode(t, body) != "rate_limited" {
			t.Fatalf("key %s after 3 wrong keys: %d %s", key, resp.StatusCode, body)
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
	}
	if resp, body := h.do("POST", "/v1/chat/completions", "sk-acme", chat("small", "hi", false)); resp.StatusCode != 200 {
		t.Errorf("a tenant's request was limited too: %d %s", resp.StatusCode, body)
	}
}

// TestAuthFailuresBucket: the allowance refills with time, per IP, and
// the right key does not spend it.
func TestAuthFailuresBucket(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	a := NewAuthFailures(6, func() time.Time { return now }) // one every 10s
	for range 6 {
		if _, ok := a.Allow("10.0.0.1:1234"); !ok {
			t.Fatal("refused within the allowance")
		}
		a.Fail("10.0.0.1:1234")
	}
	wait, ok := a.Allow("10.0.0.1:9999") // another port, same client
	if ok || wait != 10*time.Second {
		t.Fatalf("after 6 failures: ok=%v wait=%v, want refused for 10s", ok, wait)
	}
	if _, ok := a.Allow("10.0.0.2:1234"); !ok {
		t.Error("another IP was refused")
	}
	now = now.Add(10 * time.Second)
	if _, ok := a.Allow("10.0.0.1:1234"); !ok {
		t.Error("not allowed again after the refill")
	}
	if _, ok := NewAuthFailures(-1, nil).Allow("x"); !ok {
		t.Error("a negative limit limits")
	}
}
