package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/gateway"
)

// TestLoginGuessesLimited: past the limiter's allowance, every login from
// that address (the right key too) gets 429 with Retry-After, and the
// failures are shared with the gateway's admin endpoints' limiter.
func TestLoginGuessesLimited(t *testing.T) {
	lim := gateway.NewAuthFailures(3, nil)
	con, err := New(Config{IsAdminKey: func(k string) bool { return k == "adm-right" }, API: http.NotFoundHandler(), LoginLimiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	login := func(key string) *http.Response {
		r := httptest.NewRequest("POST", Prefix+"login", strings.NewReader(url.Values{"key": {key}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.RemoteAddr = "192.0.2.7:40000"
		w := httptest.NewRecorder()
		con.ServeHTTP(w, r)
		return w.Result()
	}
	if resp := login("adm-right"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("right key: %d", resp.StatusCode)
	}
	for i := range 3 {
		if resp := login("guess-" + strconv.Itoa(i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	for _, key := range []string{"guess-4", "adm-right"} {
		resp := login(key)
		if resp.StatusCode != http.StatusTooManyRequests || sessionCookie(resp) != nil {
			t.Fatalf("key %s after 3 wrong ones: %d, cookie %v", key, resp.StatusCode, sessionCookie(resp))
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
	}
	if _, ok := lim.Allow("192.0.2.7:1"); ok {
		t.Error("the login's failures are not counted where the admin endpoints look")
	}
}
