package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

// keyring maps bearer keys to tenants. Keys are held only as SHA-256
// digests; a presented key is hashed, looked up, and the digest compared
// in constant time.
type keyring struct {
	tenants   map[[32]byte]*config.Tenant
	admins    map[[32]byte]bool
	anonymous *config.Tenant // the tenant of keyless loopback requests, if any
	fails     *AuthFailures  // wrong admin keys per client IP
}

func newKeyring(c *config.Config) *keyring {
	k := &keyring{tenants: map[[32]byte]*config.Tenant{}, admins: map[[32]byte]bool{}}
	for i := range c.Tenants {
		t := &c.Tenants[i]
		for _, key := range t.APIKeys {
			k.tenants[sha256.Sum256([]byte(key))] = t
		}
		for _, h := range t.APIKeySHA256 {
			k.tenants[digest(h)] = t
		}
		if t.AnonymousLoopback && k.anonymous == nil {
			k.anonymous = t
		}
	}
	for _, key := range c.AdminKeys {
		k.admins[sha256.Sum256([]byte(key))] = true
	}
	for _, h := range c.AdminKeySHA256 {
		k.admins[digest(h)] = true
	}
	return k
}

func digest(hexDigest string) [32]byte {
	var d [32]byte
	b, _ := hex.DecodeString(hexDigest) // validated by config
	copy(d[:], b)
	return d
}

// bearer returns the key of an Authorization: Bearer header or, for
// Anthropic's clients (Claude Code, the Python SDK), of an x-api-key
// header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k, true
	}
	return "", false
}

// tenant authenticates a client request. Keys are looked up by their
// SHA-256 digest, so the lookup's timing depends on the digest, never on
// how much of a secret key a guess got right.
func (k *keyring) tenant(r *http.Request) (*config.Tenant, error) {
	key, ok := bearer(r)
	if !ok {
		if k.anonymous != nil && isLoopback(r.RemoteAddr) {
			return k.anonymous, nil
		}
		return nil, custody.Errorf(custody.CodeUnauthorized, "missing API key: send Authorization: Bearer <key>")
	}
	d := sha256.Sum256([]byte(key))
	if t, ok := k.tenants[d]; ok {
		return t, nil
	}
	// SDKs insist on sending some key; on loopback, where no key is
	// needed, a key custody does not know is ignored.
	if k.anonymous != nil && isLoopback(r.RemoteAddr) && !k.isAdmin(key) {
		return k.anonymous, nil
	}
	return nil, custody.Errorf(custody.CodeUnauthorized, "unknown API key")
}

// admin authenticates an admin request by its bearer key. (The console
// has its own signed sessions; an admin key never travels in a cookie.)
func (k *keyring) admin(r *http.Request) error {
	key, ok := bearer(r)
	if !ok {
		return custody.Errorf(custody.CodeUnauthorized, "missing admin key")
	}
	if wait, ok := k.fails.Allow(r.RemoteAddr); !ok {
		return &custody.Error{Code: custody.CodeRateLimited, RetryAfter: retrySeconds(wait),
			Message: "too many wrong admin keys from this address; retry later"}
	}
	if k.isAdmin(key) {
		return nil
	}
	if _, isTenant := k.tenants[sha256.Sum256([]byte(key))]; isTenant {
		return custody.Errorf(custody.CodeForbidden, "this endpoint needs an admin key")
	}
	k.fails.Fail(r.RemoteAddr)
	return custody.Errorf(custody.CodeUnauthorized, "unknown admin key")
}

func (k *keyring) isAdmin(key string) bool {
	d := sha256.Sum256([]byte(key))
	found := 0
	for a := range k.admins {
		found |= subtle.ConstantTimeCompare(a[:], d[:])
	}
	return found == 1
}

func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
