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
	if n := h.Bound("t1", a); n != 0 {
		t.Errorf("nothing sent yet: bound %d, want 0", n)
	}
	h.Remember("t1", a)
	// b shares 580 bytes with a: prefixes of 64 … 512 were sent, 1024 was
	// not (b is shorter: its whole length was not).
	if n := h.Bound("t1", b); n != len(b) {
		t.Errorf("bound %d, want %d (the first length not sent)", n, len(b))
	}
	if n := h.Bound("t1", a); n != len(a) {
		t.Errorf("the same prompt again: bound %d, want %d", n, len(a))
	}
	if n := h.Bound("t2", a); n != 0 {
		t.Errorf("another key: bound %d, want 0", n)
	}
	long := strings.Repeat("x", 5000)
	h.Remember("t3", long[:300])
	if n := h.Bound("t3", long); n != 512 {
		t.Errorf("shared 300 bytes: bound %d, want 512", n)
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
	if n := len(h.keys["k"].seen); n > MaxPerKey {
		t.Errorf("%d hashes kept, want at most %d", n, MaxPerKey)
	}
}
