package sim

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func benchWords(n int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("word%d", i%97)
	}
	return w
}

// BenchmarkDecode measures the decode path (read the page table, verify
// each page, generate 32 tokens) with and without ownership tags; the
// ratio of the two is the tags' overhead.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{64, 1024} {
		for _, tags := range []bool{false, true} {
			b.Run(fmt.Sprintf("words=%d/tags=%v", n, tags), func(b *testing.B) {
				p := newKVPool(4096, defaultPageTokens, tags)
				o := owner{req: 1, tenant: "acme"}
				table, err := p.prefill(o, benchWords(n))
				if err != nil {
					b.Fatal(err)
				}
				gp := genParams{maxTokens: 32}
				buf := make([]string, 0, len(table)*defaultPageTokens)
				b.ReportAllocs()
				for b.Loop() {
					ctx, err := p.read(buf[:0], o, table)
					if err != nil {
						b.Fatal(err)
					}
					generate(ctx, 0, gp)
				}
			})
		}
	}
}

// BenchmarkPageRead isolates the page reads, where the tag check lives:
// the worst case for the tags' relative cost.
func BenchmarkPageRead(b *testing.B) {
	for _, tags := range []bool{false, true} {
		b.Run(fmt.Sprintf("tags=%v", tags), func(b *testing.B) {
			p := newKVPool(4096, defaultPageTokens, tags)
			o := owner{req: 1, tenant: "acme"}
			table, _ := p.prefill(o, benchWords(1024))
			buf := make([]string, 0, 1024)
			for b.Loop() {
				if _, err := p.read(buf[:0], o, table); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChat is one non-streaming chat completion through the handler.
func BenchmarkChat(b *testing.B) {
	for _, tags := range []bool{false, true} {
		b.Run(fmt.Sprintf("tags=%v", tags), func(b *testing.B) {
			s, err := New(Config{Counter: o200k(b), OwnershipTags: tags})
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"model":"sim-1","messages":[{"role":"user","content":"` + strings.Repeat("hello world ", 50) + `"}]}`)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// BenchmarkTagOverhead measures the ownership tags' cost on the decode path
// on a noisy shared machine: it alternates short batches with tags off and
// on, so both see the same noise, and reports the median of the per-round
// ratios as overhead_% (plus the page-read-only figure, the worst case).
func BenchmarkTagOverhead(b *testing.B) {
	o := owner{req: 1, tenant: "acme"}
	setup := func(tags bool, n int) (*kvPool, []pageRef) {
		p := newKVPool(4096, defaultPageTokens, tags)
		table, err := p.prefill(o, benchWords(n))
		if err != nil {
			b.Fatal(err)
		}
		return p, table
	}
	decode := func(p *kvPool, table []pageRef, buf []string, withModel bool) {
		ctx, err := p.read(buf[:0], o, table)
		if err != nil {
			b.Fatal(err)
		}
		if withModel {
			generate(ctx, 0, genParams{maxTokens: 32})
		}
	}
	for _, tc := range []struct {
		name      string
		words     int
		withModel bool
		batch     int
	}{
		{"decode/words=256", 256, true, 20},
		{"read-only/words=256", 256, false, 2000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			off, toff := setup(false, tc.words)
			on, ton := setup(true, tc.words)
			buf := make([]string, 0, tc.words+defaultPageTokens)
			var ratios []float64
			round := 0
			for b.Loop() {
				// Alternate which configuration runs first, so warm-up and
				// drift favour neither.
				first, second := [2]*kvPool{off, on}, [2][]pageRef{toff, ton}
				if round%2 == 1 {
					first, second = [2]*kvPool{on, off}, [2][]pageRef{ton, toff}
				}
				var d [2]int64
				for k := range 2 {
					t0 := nanotime()
					for range tc.batch {
						decode(first[k], second[k], buf, tc.withModel)
					}
					d[k] = nanotime() - t0
				}
				if round%2 == 1 {
					d[0], d[1] = d[1], d[0]
				}
				ratios = append(ratios, float64(d[1])/float64(d[0]))
				round++
			}
			b.ReportMetric(100*(median(ratios)-1), "overhead_%")
		})
	}
}
