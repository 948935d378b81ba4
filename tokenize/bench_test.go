package tokenize

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// corpus is a deterministic mix of the prompts custody sees: English
// prose, source code and JSON, about size bytes.
func corpus(size int) string {
	r := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields(`the of and to in a is that for it as was with be by on not he I this are or his
		from at which but have an they you were her she there been one all we their can has more
		gateway integrity upstream token counting receipt transparency log model capacity prompt
		It's don't we'll they're Custody OpenAI's verification, signature; checkpoint. (inclusion)
		2026 1,024 3.5 42% naïve café résumé`)
	code := []string{
		"func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {",
		"\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"sending request: %w\", err)\n\t}",
		"for i := 0; i < len(buf); i++ {\n\t\tsum += int(buf[i])\n\t}",
		"def handler(event, context):\n    return {\"statusCode\": 200, \"body\": json.dumps(event)}",
		"const total = items.reduce((acc, x) => acc + x.price * x.qty, 0);",
		"// Package ledger appends leaves to the transparency log.",
		"SELECT id, created_at FROM receipts WHERE leaf_index > $1 ORDER BY id LIMIT 100;",
	}
	var b strings.Builder
	for b.Len() < size {
		switch r.IntN(3) {
		case 0:
			for i := 0; i < 60; i++ {
				w := words[r.IntN(len(words))]
				if r.IntN(12) == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				b.WriteString(w)
				b.WriteString([]string{" ", " ", " ", " ", ", ", ". ", "\n"}[r.IntN(7)])
			}
			b.WriteString("\n\n")
		case 1:
			for i := 0; i < 8; i++ {
				b.WriteString(code[r.IntN(len(code))])
				b.WriteString("\n")
			}
		case 2:
			fmt.Fprintf(&b, `{"model": "gpt-4o", "messages": [{"role": "user", "content": "%s"}], "temperature": %.2f, "max_tokens": %d, "stream": %t}`+"\n",
				words[r.IntN(len(words))], r.Float64(), r.IntN(4096), r.IntN(2) == 0)
		}
	}
	return b.String()
}

// loopCPU runs f as the benchmark loop and reports, besides MB/s, the
// throughput per second of CPU time ("cpu-MB/s"): run with -cpu 1 so that
// the process's CPU time is the loop's.
func loopCPU(b *testing.B, size int, f func()) {
	b.SetBytes(int64(size))
	start, ok := cpuTime()
	for b.Loop() {
		f()
	}
	if end, ok2 := cpuTime(); ok && ok2 && end > start {
		b.ReportMetric(float64(size)*float64(b.N)/(end-start).Seconds()/1e6, "cpu-MB/s")
	}
}

func BenchmarkCount(b *testing.B) {
	text := corpus(1 << 20)
	for _, name := range encodingNames {
		b.Run(name, func(b *testing.B) {
			e := mustEncoding(b, name)
			loopCPU(b, len(text), func() { e.Count(text) })
		})
		b.Run("tiktoken-go/"+name, func(b *testing.B) {
			ref := reference(b, name)
			loopCPU(b, len(text), func() { ref.EncodeOrdinary(text) })
		})
	}
}

// BenchmarkCountPathological is input built to make a BPE quadratic: one
// long piece of a repeated letter, and random bytes.
func BenchmarkCountPathological(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	inputs := []struct{ name, text string }{
		{"repeated-a", strings.Repeat("a", 1<<20)},
		{"repeated-space", strings.Repeat(" ", 1<<20)},
		{"random-bytes", string(random)},
		{"repeated-cjk", strings.Repeat("中", 1<<18)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			e := mustEncoding(b, "o200k_base")
			loopCPU(b, len(in.text), func() { e.Count(in.text) })
		})
	}
}

// BenchmarkCountMultilingual is for information: CJK has no spaces, so its
// pieces are long and take the heap merge more often.
func BenchmarkCountMultilingual(b *testing.B) {
	para := []string{
		"東京都は日本の首都であり、世界最大の都市圏の一つです。人口は約1400万人です。",
		"北京是中华人民共和国的首都，也是全国的政治、文化中心。",
		"مرحبا بكم في بوابة النزاهة، حيث نتحقق من كل طلب قبل إرساله.",
		"Привет! Это проверка подсчёта токенов для русского текста, с цифрами 2026 года.",
		"한국어 문장은 띄어쓰기가 있어서 조금 더 짧은 조각으로 나뉩니다.",
		"Ελληνικά κείμενα με τόνους και διαλυτικά: ΐ, ΰ. 😀👍🏽",
	}
	var sb strings.Builder
	r := rand.New(rand.NewPCG(9, 9))
	for sb.Len() < 1<<20 {
		sb.WriteString(para[r.IntN(len(para))])
		sb.WriteString([]string{" ", "\n", "\n\n"}[r.IntN(3)])
	}
	text := sb.String()
	for _, name := range encodingNames {
		b.Run(name, func(b *testing.B) {
			e := mustEncoding(b, name)
			loopCPU(b, len(text), func() { e.Count(text) })
		})
	}
}

// BenchmarkHFTokenizer counts the corpus with cl100k_base converted to a
// Llama-3-style tokenizer.json (native splitter, HF merge order).
func BenchmarkHFTokenizer(b *testing.B) {
	tok := cl100kAsHF(b)
	text := corpus(1 << 20)
	loopCPU(b, len(text), func() { tok.Count(text) })
}

// BenchmarkHFRealTokenizers counts the corpus with the real tokenizers:
// Llama-3's byte-level path (native splitter), Qwen3's (NFC, native
// splitter), DeepSeek-V3's (regexp2 splits) and Gemma-3's SentencePiece-
// style path (byte_fallback, no pre-tokenizer: one piece per stretch
// between added tokens).
func BenchmarkHFRealTokenizers(b *testing.B) {
	text := corpus(256 << 10)
	for _, family := range []string{"llama3", "qwen3", "deepseek_v3", "gemma3"} {
		b.Run(family, func(b *testing.B) {
			tok := realTokenizer(b, family)
			loopCPU(b, len(text), func() { tok.Count(text) })
		})
	}
}
