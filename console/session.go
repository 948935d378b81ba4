package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// CookieName is the console's session cookie. The gateway's admin API
// also reads a cookie of this name as an admin key; a session token is
// not one, so the cookie grants the console and nothing else.
const CookieName = "custody_admin"

// A session is a token, not the admin key: the key never sits in the
// browser, a stolen cookie expires, and every form's CSRF token is
// derived from the session it belongs to. Tokens are stateless (an HMAC
// over an expiry and a nonce), so replicas sharing SessionKey share
// logins; the price is that logout clears the browser's cookie but cannot
// revoke a copy of it before it expires.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

const (
	tokenPrefix = "v1."
	maxToken    = 128
)

func newSessions(key []byte, ttl time.Duration, now func() time.Time) (*sessions, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("console: session key: %w", err)
		}
	}
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	return &sessions{key: key, ttl: ttl, now: now}, nil
}

func (s *sessions) mac(domain string, msg []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)
}

// issue makes a session token: v1.<b64(expiry || nonce)>.<b64(mac)>.
func (s *sessions) issue() (string, time.Time) {
	exp := s.now().Add(s.ttl)
	payload := make([]byte, 8, 24)
	binary.BigEndian.PutUint64(payload, uint64(exp.Unix()))
	payload = append(payload, make([]byte, 16)...)
	rand.Read(payload[8:])
	enc := base64.RawURLEncoding
	return tokenPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac("custody-console-session", payload)), exp
}

// valid reports whether tok is an unexpired token this key issued.
func (s *sessions) valid(tok string) bool {
	if len(tok) > maxToken || !strings.HasPrefix(tok, tokenPrefix) {
		return false
	}
	p, m, ok := strings.Cut(tok[len(tokenPrefix):], ".")
	if !ok {
		return false
	}
	enc := base64.RawURLEncoding.Strict() // one spelling per token
	payload, err1 := enc.DecodeString(p)
	sum, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || len(payload) != 24 {
		return false
	}
	// The decoder skips \r and \n: only the canonical spelling is the token.
	if enc.EncodeToString(payload) != p || enc.EncodeToString(sum) != m {
		return false
	}
	if !hmac.Equal(sum, s.mac("custody-console-session", payload)) {
		return false
	}
	return s.now().Unix() < int64(binary.BigEndian.Uint64(payload[:8]))
}

// csrf is the form token of a session.
func (s *sessions) csrf(tok string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("custody-console-csrf", []byte(tok)))
}

// ValidSession reports whether tok is a live session token of a console
// built with the same SessionKey (for the gateway, should it accept the
// console's cookie on its admin API).
func (c *Console) ValidSession(tok string) bool { return c.sess.valid(tok) }

// admin wraps a page that needs a session; an unsafe method also needs
// the session's CSRF token and a same-origin request.
func (c *Console) admin(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return c.handle(func(w http.ResponseWriter, r *http.Request) error {
		ck, err := r.Cookie(CookieName)
		if err != nil || !c.sess.valid(ck.Value) {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
				return nil
			}
			return &httpError{status: http.StatusUnauthorized, msg: "log in first"}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := sameOrigin(r); err != nil {
				return err
			}
			// A multipart form (the receipt check) has its token as its
			// first part, checked by its handler before the uploads are read.
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
				r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
				if err := c.checkToken(r, r.PostFormValue("csrf")); err != nil {
					return err
				}
			}
		}
		return h(w, r)
	})
}

// checkToken checks a multipart form's CSRF token.
func (c *Console) checkToken(r *http.Request, got string) error {
	ck, err := r.Cookie(CookieName)
	if err != nil || got == "" || !hmac.Equal([]byte(got), []byte(c.sess.csrf(ck.Value))) {
		return &httpError{status: http.StatusForbidden, msg: "stale form: reload the page and try again"}
	}
	return nil
}

// sameOrigin refuses a cross-site unsafe request: Sec-Fetch-Site when
// the browser sends it, else Origin against Host. SameSite=Strict already
// keeps the cookie off such requests; this holds for the login form too,
// which has no session yet.
func sameOrigin(r *http.Request) error {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return nil // the browser vouches for it; Origin may be "null" under a strict Referrer-Policy
	case "", "none":
	default:
		return &httpError{status: http.StatusForbidden, msg: "cross-site request refused"}
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || o == "null" || u.Host != r.Host {
			return &httpError{status: http.StatusForbidden, msg: "cross-origin request refused"}
		}
	}
	return nil
}

// setCookie sets (or, with tok "", clears) the session cookie. Secure is
// set when the request came over TLS or SecureCookie says TLS ends in
// front: on plain HTTP it would not protect the cookie (the login form
// posted the key itself in clear), and browsers that refuse Secure
// cookies from http:// origins other than localhost would make login
// silently fail.
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, tok string, exp time.Time) {
	ck := &http.Cookie{Name: CookieName, Value: tok, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || c.cfg.SecureCookie}
	if tok == "" {
		ck.MaxAge = -1
	} else {
		ck.Expires = exp
	}
	http.SetCookie(w, ck)
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) error {
	return c.render(w, r, http.StatusOK, "login", nil)
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) error {
	if err := sameOrigin(r); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	key := strings.TrimSpace(r.PostFormValue("key"))
	if lim := c.cfg.LoginLimiter; lim != nil && key != "" {
		// Checked before the key, right or wrong: a guess that would be
		// right must not be told so while guessing is refused.
		if wait, ok := lim.Allow(r.RemoteAddr); !ok {
			secs := max(1, int((wait+time.Second-1)/time.Second))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			return c.render(w, r, http.StatusTooManyRequests, "login",
				map[string]string{"Error": fmt.Sprintf("Too many wrong keys from this address: try again in %d s.", secs)})
		}
	}
	if key == "" || !c.cfg.IsAdminKey(key) {
		if lim := c.cfg.LoginLimiter; lim != nil && key != "" {
			lim.Fail(r.RemoteAddr)
		}
		return c.render(w, r, http.StatusUnauthorized, "login", map[string]string{"Error": "That is not an admin key."})
	}
	tok, exp := c.sess.issue()
	c.setCookie(w, r, tok, exp)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
	return nil
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) error {
	c.setCookie(w, r, "", time.Time{})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
	return nil
}
