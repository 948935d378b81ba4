package custody

import (
	"testing"
	"time"
)

func TestNewIDSortsByTimeAndIsUnique(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewID(t0.Add(time.Duration(i) * time.Millisecond))
		if len(id) != 26 {
			t.Fatalf("id %q has %d chars", id, len(id))
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id[:10] < prev {
			t.Fatalf("ids do not sort by time: %q after %q", id, prev)
		}
		prev = id[:10]
	}
}

// FuzzParseID: ParseID accepts exactly what FormatID writes, so that two
// different strings never parse to the same bytes.
func FuzzParseID(f *testing.F) {
	f.Add(NewID(time.Now()))
	f.Add("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
	f.Add("8ZZZZZZZZZZZZZZZZZZZZZZZZZ")
	f.Add("01jabcdefghjkmnpqrstvwxyz0")
	f.Fuzz(func(t *testing.T, s string) {
		b, ok := ParseID(s)
		if ok && FormatID(b) != s {
			t.Fatalf("ParseID(%q) = %x, which formats as %q", s, b, FormatID(b))
		}
		if again, ok2 := ParseID(FormatID(b)); ok && (!ok2 || again != b) {
			t.Fatalf("FormatID(%x) does not parse back", b)
		}
	})
}

func TestParseIDOfNewID(t *testing.T) {
	for range 100 {
		id := NewID(time.Now())
		if b, ok := ParseID(id); !ok || FormatID(b) != id {
			t.Fatalf("ParseID(%q) = %x, %v", id, b, ok)
		}
	}
	for _, bad := range []string{"", "01JABCDEFGHJKMNPQRSTVWXYZ", "01JABCDEFGHJKMNPQRSTVWXYZI", "request:0123"} {
		if _, ok := ParseID(bad); ok {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}
