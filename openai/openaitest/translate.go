// Package openaitest holds what the tests of the packages translating
// OpenAI chat streams (anthropic, responses) share.
package openaitest

import (
	"testing"

	"github.com/custody-gateway/custody/openai"
)

// StreamTranslator is a chat stream translator: chunks in, the dialect's
// events out.
type StreamTranslator interface {
	Chunk(data []byte) ([]byte, error)
	Translate(c *openai.Response) ([]byte, error)
	End() ([]byte, error)
}

// BenchmarkStreamTranslator translates chunks, one stream per iteration,
// with a translator from newT, in two sub-benchmarks: raw, each chunk
// decoded by the translator (Chunk); checked, the chunks as the chat
// checks decoded them (Translate), as the gateway's bridges run.
func BenchmarkStreamTranslator(b *testing.B, chunks [][]byte, newT func() StreamTranslator) {
	decoded := make([]openai.Response, len(chunks))
	for i, c := range chunks {
		if err := decoded[i].Decode(c); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"raw", "checked"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				t := newT()
				for i, c := range chunks {
					var err error
					if mode == "raw" {
						_, err = t.Chunk(c)
					} else {
						_, err = t.Translate(&decoded[i])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if _, err := t.End(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
