package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
)

func TestCacheHistory(t *testing.T) {
	h := NewCacheHistory()
	system := strings.Repeat("You are a careful assistant. ", 20) // 580 bytes
	a := system + "Question one?"
	b := system + "Question two, rather longer than the first one?"
	h.Remember("t1", a)
	if n := h.Bound("t1", a, true); n != 0 {
		t.Errorf("only itself sent: bound %d, want 0", n)
	}
	h.Remember("t1", b)
	// b shares 580 bytes with a: prefixes of 64 … 512 were sent by a, its
	// whole (627 bytes) was not.
	if n := h.Bound("t1", b, true); n != len(b) {
		t.Errorf("bound %d, want %d (the first length no other sent)", n, len(b))
	}
	h.Remember("t1", a)
	if n := h.Bound("t1", a, true); n != len(a) {
		t.Errorf("the same prompt again: bound %d, want %d", n, len(a))
	}
	if n := h.Bound("t2", a, false); n != 0 {
		t.Errorf("another key: bound %d, want 0", n)
	}
	long := strings.Repeat("x", 5000)
	h.Remember("t3", long[:300])
	h.Remember("t3", long)
	if n := h.Bound("t3", long, true); n != 512 {
		t.Errorf("shared 300 bytes: bound %d, want 512", n)
	}
	h.Remember("t4", "something else entirely, and long enough to hash a prefix of it at 64 bytes")
	h.Remember("t4", long)
	if n := h.Bound("t4", long, true); n != 64 {
		t.Errorf("another prompt sent, nothing shared: bound %d, want 64", n)
	}
	if err := CachedTokens(600, 512); !errors.Is(err, custody.ErrCacheShared) {
		t.Errorf("over the bound: %v", err)
	}
	if err := CachedTokens(512, 512); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}

func TestCacheHistoryIsBounded(t *testing.T) {
	h := NewCacheHistory()
	for i := range 3 * MaxPerKey {
		h.Remember("k", strings.Repeat("y", 64)+string(rune('a'+i%26))+strings.Repeat("z", i))
	}
	if n := len(h.keys["k"].seen); n > MaxPerKey || n == 0 {
		t.Errorf("%d hashes kept, want at most %d", n, MaxPerKey)
	}
}
