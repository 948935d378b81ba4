package console

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

func TestSessionTokens(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := newSessions([]byte("k1"), time.Hour, clock)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newSessions([]byte("k2"), time.Hour, clock)
	tok, exp := s.issue()
	if !exp.Equal(now.Add(time.Hour)) {
		t.Errorf("expiry %v", exp)
	}
	flip := []byte(tok)
	flip[len(flip)-2] ^= 1
	later, _ := newSessions([]byte("k1"), time.Hour, func() time.Time { return now.Add(time.Hour) })
	for _, c := range []struct {
		name string
		s    *sessions
		tok  string
		ok   bool
	}{
		{"issued", s, tok, true},
		{"tampered mac", s, string(flip), false},
		{"other key", other, tok, false},
		{"expired", later, tok, false},
		{"empty", s, "", false},
		{"no prefix", s, strings.TrimPrefix(tok, tokenPrefix), false},
		{"overlong", s, tok + strings.Repeat("A", maxToken), false},
		{"the admin key", s, "adm-1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.valid(c.tok); got != c.ok {
				t.Errorf("valid = %v", got)
			}
		})
	}
	// Base64 has spare bits in the MAC's last character: a variant that
	// decodes to the same bytes is not the token.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	variant := tok[:len(tok)-1] + string(alphabet[last^1])
	if s.valid(variant) {
		t.Errorf("accepted %q, a non-canonical variant of %q", variant, tok)
	}
	tok2, _ := s.issue()
	if tok2 == tok || s.csrf(tok) == s.csrf(tok2) {
		t.Error("two sessions share a token or a CSRF token")
	}
}

// FuzzSessionToken: no input panics, and an accepted token is exactly
// the canonical form of its payload's MAC (tokens are not malleable).
func FuzzSessionToken(f *testing.F) {
	// A fixed clock keeps the seeds in testdata (tokens of "fuzz-key"
	// expiring at 0x6B0CD89B) live.
	clock := func() time.Time { return time.Unix(0x6B0CD89B-60, 0) }
	s, _ := newSessions([]byte("fuzz-key"), time.Hour, clock)
	tok, _ := s.issue()
	f.Add(tok)
	enc := base64.RawURLEncoding
	f.Fuzz(func(t *testing.T, in string) {
		if !s.valid(in) {
			return
		}
		p, _, _ := strings.Cut(strings.TrimPrefix(in, tokenPrefix), ".")
		payload, err := enc.DecodeString(p)
		if err != nil {
			t.Fatalf("accepted %q with a bad payload", in)
		}
		if want := tokenPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac("custody-console-session", payload)); in != want {
			t.Fatalf("accepted %q, a variant of %q", in, want)
		}
	})
}

func TestSummarize(t *testing.T) {
	until := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	since := until.Add(-24 * time.Hour)
	rows := []index.StatsRow{
		{Bucket: 0, RequestedModel: "m", Route: 0, Provider: "a", ResponseModel: "m-0827", Verdict: custody.Verified, Count: 1},
		{Bucket: buckets - 1, RequestedModel: "m", Route: 0, Provider: "a", ResponseModel: "m-0901", Verdict: custody.Flagged, Count: 1},
		{Bucket: buckets - 1, RequestedModel: "m", Route: 1, Provider: "b", ResponseModel: "m-0827", Verdict: custody.Verified, Fallback: true, Count: 3},
		{Bucket: buckets - 1, RequestedModel: "n", Route: -1, Verdict: custody.Rejected, Count: 1},
	}
	d := summarize(rows, []RouteHealth{{Model: "n", Route: 0, Probe: "identity"}}, since, until, func(string) bool { return true })
	if len(d.Models) != 2 || d.Models[0].Name != "m" || d.Models[1].Name != "n" || d.Records != 6 {
		t.Fatalf("models %+v, %d records", d.Models, d.Records)
	}
	m, n := d.Models[0], d.Models[1]
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"m total", m.Total, 5}, {"m verified", m.Verified, 4}, {"m flagged", m.Flagged, 1}, {"m fallbacks", m.Fallb, 3},
		{"m routes", int64(len(m.Routes)), 2}, {"m route 1 fallbacks", m.Routes[1].Fallb, 3},
		{"m first slice m-0827", m.mix[0]["m-0827"], 1}, {"m last slice m-0901", m.mix[buckets-1]["m-0901"], 1},
		{"m last slice m-0827", m.mix[buckets-1]["m-0827"], 3},
		{"n rejected", n.Rejected, 1}, {"n none answered", n.mix[buckets-1]["none"], 1}, {"n health", int64(len(n.Health)), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if len(m.Legend) != 2 || m.Legend[0].Name != "m-0827" || m.Legend[0].Count != 4 {
		t.Errorf("legend %+v: most used first", m.Legend)
	}
}

// TestChartEscapes: a response model is whatever the upstream said; it
// must not become markup.
func TestChartEscapes(t *testing.T) {
	now := time.Now()
	evil := `<script>alert(1)</script>`
	d := summarize([]index.StatsRow{{Bucket: 3, RequestedModel: "m", ResponseModel: evil, Verdict: custody.Rejected, Count: 1}}, nil, now.Add(-time.Hour), now, func(string) bool { return true })
	svg := string(d.Models[0].Mix)
	if strings.Contains(svg, "<script") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Errorf("unescaped model name in the chart: %s", svg)
	}
}
