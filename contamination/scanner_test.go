package contamination

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const (
	promptA = "Please summarise the attached note: the quarterly audit of Vellmore Logistics found " +
		"that warehouse seven shipped crates of copper wire without invoices during March."
	promptB = "Write a short poem about a lighthouse keeper who collects blue glass bottles " +
		"and names each one after a storm."
	// leakA is 10 consecutive words of promptA.
	leakA   = "warehouse seven shipped crates of copper wire without invoices during"
	secretX = "canary-7f3a9c01e4b2d5a8"
)

type scanCase struct {
	name     string
	prompts  map[string]string // request id -> prompt, remembered in id order
	id       string            // the request whose response is scanned
	prompt   string            // its own prompt
	secrets  []string
	response string
	want     string // "" clean, else Kind
	source   string // expected SourceRequest for fingerprint findings
}

func scanCases() []scanCase {
	popular := "Answer in a formal tone and cite every source you rely on when replying."
	popPrompts := map[string]string{}
	for i := range 5 { // MaxSharedBy (4 in these tests) + 1 prompts share the boilerplate
		popPrompts[fmt.Sprintf("p%d", i)] = popular + fmt.Sprintf(" Topic %d: %s", i, strings.Repeat(fmt.Sprintf("w%dx ", i), 3))
	}
	onePrompt := map[string]string{"p0": popular + " Topic zero."}
	return []scanCase{
		{name: "own echo clean", prompts: map[string]string{"a": promptA, "b": promptB}, id: "a", prompt: promptA,
			response: "Summary: " + promptA + " That is all."},
		{name: "another request's sentence caught", prompts: map[string]string{"a": promptA, "b": promptB}, id: "b", prompt: promptB,
			response: "The keeper said: " + leakA + " and then smiled.", want: KindFingerprint, source: "a"},
		{name: "case and punctuation do not hide a leak", prompts: map[string]string{"a": promptA, "b": promptB}, id: "b", prompt: promptB,
			response: "WAREHOUSE seven, shipped -- crates of COPPER wire; without invoices during...", want: KindFingerprint, source: "a"},
		{name: "leak from a request not yet scanned against itself", prompts: map[string]string{"a": promptA}, id: "new", prompt: "",
			response: leakA, want: KindFingerprint, source: "a"},
		{name: "run shorter than MinRun not caught", prompts: map[string]string{"a": promptA, "b": promptB}, id: "b", prompt: promptB,
			response: "The crates of copper wire were heavy."},
		{name: "popular phrase not caught", prompts: popPrompts, id: "q", prompt: "Tell me about owls.",
			response: "Sure. " + popular},
		{name: "phrase of one prompt caught", prompts: onePrompt, id: "q", prompt: "Tell me about owls.",
			response: "Sure. " + popular, want: KindFingerprint, source: "p0"},
		{name: "text in own and other prompt clean", prompts: map[string]string{"a": promptA, "c": "Rewrite: " + leakA}, id: "c", prompt: "Rewrite: " + leakA,
			response: "Rewritten: " + leakA},
		{name: "another request's nonce caught alone", prompts: map[string]string{"n": "Please remember the code k9XbQ2mZ7w for later.", "b": promptB}, id: "b", prompt: promptB,
			response: "The code is k9XbQ2mZ7w.", want: KindFingerprint, source: "n"},
		{name: "own nonce clean", prompts: map[string]string{"n": "Please remember the code k9XbQ2mZ7w for later."}, id: "m", prompt: "My code is k9XbQ2mZ7w.",
			response: "Your code is k9XbQ2mZ7w."},
		{name: "version string is not a nonce", prompts: map[string]string{"v": "Install python311 first."}, id: "b", prompt: promptB,
			response: "Use python311 for this."},
		// The simulator's toy model quotes runs of the pages it reads,
		// broken by words of its own vocabulary.
		{name: "sim-like stale decode caught", prompts: map[string]string{"a": promptA}, id: "b", prompt: promptB,
			response: "quorra the quarterly audit of vellmore logistics found that velmat warehouse seven shipped crates of copper wire ostrin",
			want:     KindFingerprint, source: "a"},
		{name: "secret caught", prompts: map[string]string{"b": promptB}, id: "b", prompt: promptB, secrets: []string{secretX},
			response: "Here you go: CANARY 7F3A9C01E4B2D5A8.", want: KindSecret},
		{name: "own secret exempt", prompts: map[string]string{"b": promptB}, id: "c", prompt: "Remember " + secretX, secrets: []string{secretX},
			response: "I will remember " + secretX + "."},
		{name: "other secret caught with own exempt", prompts: nil, id: "c", prompt: "Remember " + secretX,
			secrets:  []string{secretX, "tenant-zz-91b0c7d2e6f4"},
			response: secretX + " and tenant zz 91b0c7d2e6f4", want: KindSecret},
		{name: "secret wins over fingerprint", prompts: map[string]string{"a": promptA}, id: "b", prompt: promptB, secrets: []string{secretX},
			response: leakA + " " + secretX, want: KindSecret},
		{name: "empty response clean", prompts: map[string]string{"a": promptA}, id: "b", prompt: promptB, secrets: []string{secretX}},
	}
}

func setup(t testing.TB, c scanCase, cfg Config) *Detector {
	t.Helper()
	d := New(cfg)
	for _, id := range sortedKeys(c.prompts) {
		d.Remember(id, "tenant-"+id, d.Fingerprint(c.prompts[id]))
	}
	for i, s := range c.secrets {
		d.AddSecret(s, fmt.Sprintf("secret%d", i))
	}
	// The scanned request is admitted before its response arrives.
	d.Remember(c.id, "tenant-"+c.id, d.Fingerprint(c.prompt))
	return d
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func checkFinding(t *testing.T, c scanCase, f Finding, ok bool) {
	t.Helper()
	if (c.want != "") != ok || f.Kind != c.want {
		t.Fatalf("finding %+v, %v; want kind %q", f, ok, c.want)
	}
	if c.want == KindFingerprint {
		if f.SourceRequest != c.source || f.SourceTenant != "tenant-"+c.source {
			t.Errorf("source %q/%q, want %q", f.SourceRequest, f.SourceTenant, c.source)
		}
		if f.Run < 3 && f.Run != 1 { // 1: a nonce
			t.Errorf("run %d < MinRun", f.Run)
		}
	}
	if c.want == KindSecret && !strings.HasPrefix(f.SecretLabel, "secret") {
		t.Errorf("label %q", f.SecretLabel)
	}
}

func TestScan(t *testing.T) {
	for _, c := range scanCases() {
		t.Run(c.name, func(t *testing.T) {
			d := setup(t, c, Config{Warmup: -1, MaxSharedBy: 4})
			f, ok := d.Scan(c.id, d.Fingerprint(c.prompt), c.prompt, c.response)
			checkFinding(t, c, f, ok)
		})
	}
}

// TestScanChunked cuts every response at every byte, and byte by byte: a
// k-gram or secret split across chunks is still found.
func TestScanChunked(t *testing.T) {
	for _, c := range scanCases() {
		t.Run(c.name, func(t *testing.T) {
			d := setup(t, c, Config{Warmup: -1, MaxSharedBy: 4})
			own := d.Fingerprint(c.prompt)
			for cut := 0; cut <= len(c.response); cut++ {
				s := d.NewScanner(c.id, own, c.prompt)
				s.noLearn = true // the same response, scanned again and again
				s.Write([]byte(c.response[:cut]))
				s.Write([]byte(c.response[cut:]))
				s.Close()
				f, ok := s.Finding()
				checkFinding(t, c, f, ok)
			}
			s := d.NewScanner(c.id, own, c.prompt)
			s.noLearn = true
			for i := range len(c.response) {
				s.Write([]byte{c.response[i]})
			}
			s.Close()
			f, ok := s.Finding()
			checkFinding(t, c, f, ok)
		})
	}
}

func TestFindingBeforeClose(t *testing.T) {
	d := New(Config{Warmup: -1})
	d.Remember("a", "t", d.Fingerprint(promptA))
	d.AddSecret(secretX, "x")
	s := d.NewScanner("b", nil, "")
	s.WriteString(leakA + " more")
	if f, ok := s.Finding(); !ok || f.Kind != KindFingerprint {
		t.Fatalf("after the leak: %+v %v", f, ok)
	}
	s.WriteString(" text " + secretX[:8])
	if f, _ := s.Finding(); f.Kind != KindFingerprint {
		t.Fatalf("half a secret: %+v", f)
	}
	s.WriteString(secretX[8:])
	if f, ok := s.Finding(); !ok || f.Kind != KindSecret {
		t.Fatalf("after the secret: %+v %v", f, ok)
	}
	s.Close()
	if _, err := s.Write([]byte("x")); err != ErrClosed {
		t.Errorf("write after close: %v", err)
	}
}

func TestRemoveSecret(t *testing.T) {
	d := New(Config{Warmup: -1})
	d.AddSecret(secretX, "x")
	d.AddSecret("second-secret-0a1b2c3d4e", "y")
	started := d.NewScanner("r", nil, "")
	d.RemoveSecret(secretX)
	if _, ok := d.Scan("r", nil, "", "leaked "+secretX); ok {
		t.Error("removed secret still found by a new scan")
	}
	if f, ok := d.Scan("r", nil, "", "second secret 0A1B2C3D4E"); !ok || f.SecretLabel != "y" {
		t.Errorf("remaining secret: %+v %v", f, ok)
	}
	started.WriteString(secretX)
	if _, ok := started.Finding(); !ok {
		t.Error("a scanner started before the removal keeps its secrets")
	}
	d.AddSecret("!!!", "punctuation only")
	if _, ok := d.Scan("r", nil, "", "!!! ???"); ok {
		t.Error("a secret with no words matched")
	}
}

func TestEviction(t *testing.T) {
	leak := func(i int) string {
		return fmt.Sprintf("zeta%d omicron%d lambda%d sigma%d kappa%d theta%d rho%d tau%d phi%d psi%d", i, i, i, i, i, i, i, i, i, i)
	}
	// The same leak is scanned repeatedly: CommonAfter is off so that the
	// generic-phrase sketch does not learn it.
	caught := func(d *Detector, i int) bool {
		_, ok := d.Scan("scanner", nil, "", "text "+leak(i)+" text")
		return ok
	}
	t.Run("by count", func(t *testing.T) {
		d := New(Config{Warmup: -1, CommonAfter: -1, MaxPrompts: 2})
		for i := range 3 {
			d.Remember(fmt.Sprint(i), "t", d.Fingerprint(leak(i)))
		}
		if caught(d, 0) || !caught(d, 1) || !caught(d, 2) {
			t.Errorf("caught 0,1,2 = %v,%v,%v; want false,true,true", caught(d, 0), caught(d, 1), caught(d, 2))
		}
		if n, _ := d.Remembered(); n != 2 {
			t.Errorf("remembered %d prompts", n)
		}
	})
	t.Run("by total prints", func(t *testing.T) {
		// 10 words make 7 k-grams, of which winnowing keeps 3 to 7: three
		// prompts never fit in 8 fingerprints.
		d := New(Config{Warmup: -1, CommonAfter: -1, MaxPrints: 8})
		for i := range 3 {
			d.Remember(fmt.Sprint(i), "t", d.Fingerprint(leak(i)))
			if _, p := d.Remembered(); p > 8 {
				t.Fatalf("%d fingerprints remembered", p)
			}
		}
		n, _ := d.Remembered()
		if caught(d, 0) || !caught(d, 2) || caught(d, 1) != (n == 2) {
			t.Errorf("%d remembered, caught 0,1,2 = %v,%v,%v", n, caught(d, 0), caught(d, 1), caught(d, 2))
		}
	})
	t.Run("by TTL", func(t *testing.T) {
		c := &clock{t: time.Unix(1e9, 0)}
		d := New(Config{Warmup: -1, CommonAfter: -1, TTL: time.Minute, Now: c.now})
		d.Remember("0", "t", d.Fingerprint(leak(0)))
		c.add(40 * time.Second)
		d.Remember("1", "t", d.Fingerprint(leak(1)))
		c.add(30 * time.Second)
		// 0 is 70 s old: not reported even before anything prunes it.
		if caught(d, 0) || !caught(d, 1) {
			t.Errorf("caught 0,1 = %v,%v; want false,true", caught(d, 0), caught(d, 1))
		}
		d.Forget()
		if n, p := d.Remembered(); n != 1 || p == 0 {
			t.Errorf("after Forget: %d prompts, %d prints", n, p)
		}
		c.add(time.Minute)
		d.Forget()
		if n, p := d.Remembered(); n != 0 || p != 0 {
			t.Errorf("after expiry: %d prompts, %d prints", n, p)
		}
		d.mu.RLock()
		defer d.mu.RUnlock()
		if len(d.fps) != 0 || len(d.more) != 0 {
			t.Errorf("index not empty: %d, %d", len(d.fps), len(d.more))
		}
	})
}

// TestSharedSources checks the bookkeeping of a fingerprint held by several
// prompts as they come and go: the popular ones become attributable again
// once enough of their holders are forgotten.
func TestSharedSources(t *testing.T) {
	shared := "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo"
	d := New(Config{Warmup: -1, CommonAfter: -1, MaxPrompts: 6, MaxSharedBy: 2})
	for i := range 6 {
		d.Remember(fmt.Sprint(i), "t", d.Fingerprint(shared+fmt.Sprintf(" unique%d", i)))
	}
	if _, ok := d.Scan("x", nil, "", shared); ok {
		t.Fatal("held by 6 > 2 prompts: still caught")
	}
	for i := 6; i < 10; i++ {
		d.Remember(fmt.Sprint(i), "t", d.Fingerprint(fmt.Sprintf("other prompt number %d", i)))
	}
	// Now only prompts 4 and 5 hold it, but 4 was never named (the known
	// sources were full when it came): not attributable.
	if _, ok := d.Scan("x", nil, "", shared); ok {
		t.Error("unnamed holder: caught")
	}
	d.Remember("10", "t", d.Fingerprint("other prompt number ten"))
	d.Remember("11", "t", d.Fingerprint("other prompt number eleven"))
	if _, ok := d.Scan("x", nil, "", shared); ok {
		t.Error("no holder left: caught")
	}
	d.Remember("12", "t", d.Fingerprint(shared))
	if f, ok := d.Scan("x", nil, "", shared); !ok || f.SourceRequest != "12" {
		t.Errorf("one holder again: %+v %v", f, ok)
	}
}

func TestConcurrent(t *testing.T) {
	d := New(Config{Warmup: -1, MaxPrompts: 1024}) // more than all requests: none forgotten
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprintf("g%d-%d", g, i)
				p := concPrompt(g, i)
				own := d.Fingerprint(p)
				d.Remember(id, "t", own)
				if i%50 == 0 {
					d.AddSecret(fmt.Sprintf("secret-%d-%d-abcdef", g, i), id)
				}
				if i%70 == 0 {
					d.RemoveSecret(fmt.Sprintf("secret-%d-%d-abcdef", g, i-50))
				}
				if _, ok := d.Scan(id, own, p, "echo: "+p); ok {
					t.Errorf("%s: own echo flagged", id)
				}
				if i > 0 {
					if _, ok := d.Scan(id, own, p, concPrompt(g, i-1)); !ok {
						t.Errorf("%s: previous prompt not caught", id)
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 100 {
			d.Forget()
			d.Remembered()
		}
	}()
	wg.Wait()
}

func concPrompt(g, i int) string {
	return fmt.Sprintf("worker%d job%d wants alpha%d_%d beta%d_%d gamma%d_%d delta%d_%d", g, i, g, i, g, i, g, i, g, i)
}
