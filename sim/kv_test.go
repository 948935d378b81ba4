package sim

import (
	"errors"
	"slices"
	"testing"
)

func TestKVPool(t *testing.T) {
	a := owner{req: 1, tenant: "acme"}
	b := owner{req: 2, tenant: "acme"}
	wordsA := []string{"a1", "a2", "a3", "a4", "a5"}
	t.Run("read own pages", func(t *testing.T) {
		for _, tags := range []bool{false, true} {
			p := newKVPool(8, 2, tags)
			table, err := p.prefill(a, wordsA)
			if err != nil || len(table) != 3 {
				t.Fatalf("prefill: %d pages, %v", len(table), err)
			}
			got, err := p.read(nil, a, table)
			if err != nil || !slices.Equal(got, wordsA) {
				t.Errorf("tags=%v: read %v, %v", tags, got, err)
			}
		}
	})
	t.Run("freed pages keep contents and are read last-freed first", func(t *testing.T) {
		p := newKVPool(8, 2, false)
		table, _ := p.prefill(a, wordsA)
		if st := p.stale(8); len(st) != 0 {
			t.Errorf("stale before any free: %v", st)
		}
		p.release(table)
		st := p.stale(8)
		got, err := p.read(nil, b, st)
		if err != nil || !slices.Equal(got, []string{"a5", "a3", "a4", "a1", "a2"}) {
			t.Errorf("stale read %v, %v", got, err)
		}
	})
	t.Run("allocation takes the least recently freed", func(t *testing.T) {
		p := newKVPool(4, 2, false)
		ta, _ := p.prefill(a, wordsA[:2])
		p.release(ta)
		tb, _ := p.prefill(b, []string{"b1"})
		if tb[0].idx == ta[0].idx {
			t.Error("the page just freed was reused at once")
		}
	})
	t.Run("tags refuse foreign pages", func(t *testing.T) {
		p := newKVPool(8, 2, true)
		ta, _ := p.prefill(a, wordsA)
		p.release(ta)
		tb, _ := p.prefill(b, []string{"b1"})
		cases := map[string][]pageRef{
			"stale page":          append(slices.Clone(tb), p.stale(1)...),
			"other tenant":        tb,
			"outdated gen":        {{idx: tb[0].idx, gen: tb[0].gen - 1}},
			"page of other owner": ta[:1],
		}
		for name, table := range cases {
			o := b
			if name == "other tenant" {
				o.tenant = "evil"
			}
			if got, err := p.read(nil, o, table); !errors.Is(err, errKVForeignPage) || len(got) != 0 {
				t.Errorf("%s: read %v, %v", name, got, err)
			}
		}
	})
	t.Run("exhaustion", func(t *testing.T) {
		p := newKVPool(2, 2, false)
		if _, err := p.prefill(a, wordsA); !errors.Is(err, errKVExhausted) {
			t.Errorf("err %v", err)
		}
		if _, err := p.prefill(a, wordsA[:4]); err != nil {
			t.Errorf("exact fit: %v", err)
		}
	})
}
