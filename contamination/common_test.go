package contamination

import (
	"fmt"
	"testing"
)

// TestCommonPhrase: a phrase that one remembered prompt holds is reported in
// the first CommonAfter responses that carry it, then learnt as the model's
// own stock phrase.
func TestCommonPhrase(t *testing.T) {
	phrase := "Let me know if you would like me to make any further changes to the draft."
	for _, after := range []int{1, 3} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			d := New(Config{Warmup: -1, CommonAfter: after})
			d.Remember("chat", "t1", d.Fingerprint("User: hi\nAssistant: Hello. "+phrase+"\nUser: thanks"))
			for i := range after + 2 {
				_, ok := d.Scan(fmt.Sprint("r", i), nil, "", fmt.Sprintf("Answer %d. ", i)+phrase)
				if want := i < after; ok != want {
					t.Errorf("response %d: found %v, want %v", i, ok, want)
				}
			}
		})
	}
	t.Run("own prompt does not teach", func(t *testing.T) {
		d := New(Config{Warmup: -1, CommonAfter: 1})
		d.Remember("chat", "t1", d.Fingerprint(phrase))
		own := "Please repeat: " + phrase
		for i := range 3 {
			id := fmt.Sprint("echo", i)
			pr := d.Fingerprint(own)
			d.Remember(id, "t2", pr)
			if _, ok := d.Scan(id, pr, own, phrase); ok {
				t.Fatal("own echo flagged")
			}
		}
		if _, ok := d.Scan("other", nil, "", phrase); !ok {
			t.Error("echoes of own prompts taught the sketch")
		}
	})
	t.Run("probe does not teach", func(t *testing.T) {
		d := New(Config{Warmup: -1, CommonAfter: 1})
		d.Remember("chat", "t1", d.Fingerprint(phrase))
		s := d.NewScanner("x", nil, "")
		s.noLearn = true
		s.WriteString(phrase)
		s.Close()
		if _, ok := d.Scan("y", nil, "", phrase); !ok {
			t.Error("noLearn scanner taught the sketch")
		}
	})
}

func TestWarmup(t *testing.T) {
	leak := "warehouse seven shipped crates of copper wire without invoices during March"
	d := New(Config{Warmup: 2, CommonAfter: 5})
	d.Remember("a", "t", d.Fingerprint(leak))
	d.AddSecret(secretX, "x")
	if f, ok := d.Scan("b", nil, "", secretX); !ok || f.Kind != KindSecret {
		t.Errorf("secret during warm-up: %+v %v", f, ok)
	}
	if _, ok := d.Scan("b", nil, "", leak); ok {
		t.Error("fingerprint finding during warm-up")
	}
	if _, ok := d.Scan("c", nil, "", leak); !ok {
		t.Error("no fingerprint finding after warm-up")
	}
}

func TestCommonDecay(t *testing.T) {
	c := newCommon()
	g := []uint64{0x123456789abcdef0}
	for range 4 {
		c.learn(g)
	}
	if n := c.countLocked(g[0]); n != 4 {
		t.Fatalf("count %d, want 4", n)
	}
	big := make([]uint64, commonDecay)
	for i := range big {
		big[i] = mix64(uint64(i) + 1)
	}
	c.learn(big)
	if n := c.countLocked(g[0]); n > 3 {
		t.Errorf("count %d after decay, want halved", n)
	}
	for range 300 {
		c.learn(g)
	}
	if n := c.countLocked(g[0]); n != 255 {
		t.Errorf("count %d, want saturated 255", n)
	}
}
