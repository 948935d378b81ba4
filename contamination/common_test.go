package contamination

import (
	"fmt"
	"testing"
)

// TestCommonPhrase: a phrase that responses said (outside their own
// prompts) at least CommonAfter times is the model's own and neutral, even
// once a remembered prompt holds it; so the same text of one remembered
// prompt is reported every time: a response found contaminated teaches
// nothing (the same leak retried is caught again).
func TestCommonPhrase(t *testing.T) {
	// Not a stock phrase: the built-in table must not already know it.
	phrase := "Tell the quartermaster that the brass lanterns go to the north tower before dusk."
	for _, after := range []int{1, 3} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			d := New(Config{CommonAfter: after})
			for i := range after {
				if _, ok := d.Scan(fmt.Sprint("early", i), nil, "", fmt.Sprintf("Answer %d. ", i)+phrase); ok {
					t.Fatalf("response %d: flagged with nothing remembered", i)
				}
			}
			d.Remember("chat", "t1", d.Fingerprint("User: hi\nAssistant: Hello. "+phrase+"\nUser: thanks"))
			if _, ok := d.Scan("late", nil, "", "Again: "+phrase); ok {
				t.Error("a learnt phrase of the model was flagged")
			}
		})
	}
	for _, after := range []int{1, 3} {
		t.Run(fmt.Sprint("retried leak, after ", after), func(t *testing.T) {
			d := New(Config{CommonAfter: after})
			d.Remember("chat", "t1", d.Fingerprint(phrase))
			for i := range after + 3 {
				if _, ok := d.Scan(fmt.Sprint("r", i), nil, "", phrase); !ok {
					t.Errorf("try %d: the leak passed (a flagged response taught the detector)", i+1)
				}
			}
		})
	}
	t.Run("a tenant cannot whitelist for itself", func(t *testing.T) {
		d := New(Config{})
		// The attacker has the model say the phrase, unflagged (nothing
		// remembered holds it yet), several times.
		for i := range 3 {
			s := d.NewTenantScanner(fmt.Sprint("teach", i), "attacker", nil, "")
			s.WriteString(phrase)
			if s.Close(); func() bool { _, ok := s.Finding(); return ok }() {
				t.Fatalf("teaching response %d flagged", i)
			}
		}
		d.Remember("victim-req", "victim", d.Fingerprint(phrase))
		s := d.NewTenantScanner("leak", "attacker", nil, "")
		s.WriteString(phrase)
		s.End()
		if _, ok := s.Finding(); !ok {
			t.Fatal("the attacker's own teaching made the victim's text generic to it")
		}
		// Answers to two tenants saying it make it generic: the model's
		// stock phrase, not a leak.
		d = New(Config{})
		for i, tenant := range []string{"attacker", "someone-else"} {
			o := d.NewTenantScanner(fmt.Sprint("say", i), tenant, nil, "")
			o.WriteString("Indeed. " + phrase)
			o.Close()
		}
		d.Remember("victim-req", "victim", d.Fingerprint(phrase))
		s = d.NewTenantScanner("leak2", "attacker", nil, "")
		s.WriteString(phrase)
		s.End()
		if _, ok := s.Finding(); ok {
			t.Error("a phrase two tenants' answers said is still reported")
		}
	})
	t.Run("own prompt does not teach", func(t *testing.T) {
		d := New(Config{CommonAfter: 1})
		own := "Please repeat: " + phrase
		for i := range 3 {
			id := fmt.Sprint("echo", i)
			pr := d.Fingerprint(own)
			d.Remember(id, "t2", pr)
			if _, ok := d.Scan(id, pr, own, phrase); ok {
				t.Fatal("own echo flagged")
			}
		}
		d.Remember("chat", "t1", d.Fingerprint(phrase))
		if _, ok := d.Scan("other", nil, "", phrase); !ok {
			t.Error("echoes of own prompts taught the sketch")
		}
	})
	t.Run("probe does not teach", func(t *testing.T) {
		d := New(Config{CommonAfter: 1})
		s := d.NewScanner("x", nil, "")
		s.noLearn = true
		s.WriteString(phrase)
		s.Close()
		d.Remember("chat", "t1", d.Fingerprint(phrase))
		if _, ok := d.Scan("y", nil, "", phrase); !ok {
			t.Error("noLearn scanner taught the sketch")
		}
	})
}

// TestNoWarmup: with the defaults, the first response a fresh Detector
// scans is checked for fingerprints (the stock phrases stand in for the
// warm-up there was).
func TestNoWarmup(t *testing.T) {
	leak := "warehouse seven shipped crates of copper wire without invoices during March"
	d := New(Config{})
	d.Remember("a", "t", d.Fingerprint(leak))
	if f, ok := d.Scan("b", nil, "", leak); !ok || f.SourceRequest != "a" {
		t.Errorf("first response: %+v %v", f, ok)
	}
}

// TestStockPhrases: a phrase a remembered prompt holds is neutral in a
// response from the first one on when it is a built-in stock phrase (an
// assistant closer, a licence header, a common 4-gram of English), and
// not with NoStockPhrases.
func TestStockPhrases(t *testing.T) {
	for _, phrase := range []string{
		"I hope this helps! Let me know if you have any other questions.",
		"Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
		"if err != nil { return nil, err } if err != nil { return err }",
	} {
		t.Run(phrase[:16], func(t *testing.T) {
			for _, off := range []bool{false, true} {
				d := New(Config{NoStockPhrases: off})
				d.Remember("chat", "t1", d.Fingerprint("User: fix it\nAssistant: Done. "+phrase+"\nUser: thanks"))
				if _, ok := d.Scan("b", nil, "", "Here you go. "+phrase); ok != off {
					t.Errorf("NoStockPhrases %v: flagged %v", off, ok)
				}
			}
		})
	}
	d := New(Config{})
	if d.stock.count() < 10000 {
		t.Errorf("%d stock k-grams: the embedded table did not load", d.stock.count())
	}
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
	// The secret's response, found, taught nothing: one clean response
	// more ends the warm-up.
	d.Scan("w", nil, "", "nothing to report today")
	if _, ok := d.Scan("c", nil, "", leak); !ok {
		t.Error("no fingerprint finding after warm-up")
	}
}

func TestCommonDecay(t *testing.T) {
	c := newCommon()
	g := []uint64{0x123456789abcdef0}
	for range 4 {
		c.learn(g, 0)
	}
	if n := c.countLocked(g[0]); n != 4 {
		t.Fatalf("count %d, want 4", n)
	}
	big := make([]uint64, commonDecay)
	for i := range big {
		big[i] = mix64(uint64(i) + 1)
	}
	c.learn(big, 0)
	if n := c.countLocked(g[0]); n > 3 {
		t.Errorf("count %d after decay, want halved", n)
	}
	for range 300 {
		c.learn(g, 0)
	}
	if n := c.countLocked(g[0]); n != 255 {
		t.Errorf("count %d, want saturated 255", n)
	}
}
