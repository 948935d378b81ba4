package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/openai"
)

// BenchmarkContract is the contract check's cost per response: the
// contract read from the request, the answer made from the parsed
// response, and every clause held, with 1, 10 and 50 declared tools (the
// call is to the last one, whose schema is checked). The schemas are
// compiled once (Schemas), as they are for a client that sends the same
// tools with each request; compile is the cost of a first sight.
func BenchmarkContract(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		tools := make([]string, n)
		for i := range tools {
			tools[i] = fmt.Sprintf(`{"type":"function","function":{"name":"tool_%d","description":"does thing %d","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":14},"units":{"enum":["metric","imperial"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["city","days"],"additionalProperties":false}}}`, i, i)
		}
		req := `{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[` + strings.Join(tools, ",") + `],"max_tokens":200}`
		resp := []byte(completion(40, call("tool_calls", [2]string{fmt.Sprintf("tool_%d", n-1), `{"city":"Oslo","days":3,"units":"metric","tags":["a","b"]}`})))
		r, err := openai.ParseRequest([]byte(req))
		if err != nil {
			b.Fatal(err)
		}
		parsed, err := openai.ParseResponse(resp)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var schemas Schemas
			b.ReportAllocs()
			for b.Loop() {
				c := ChatContract(&r.Asked)
				if vs := c.Check(PlainAnswer(&c, parsed, resp), &schemas); vs != nil {
					b.Fatal(vs)
				}
			}
		})
		b.Run(fmt.Sprintf("tools=%d/compile", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := ChatContract(&r.Asked)
				if vs := c.Check(PlainAnswer(&c, parsed, resp), nil); vs != nil {
					b.Fatal(vs)
				}
			}
		})
	}
	b.Run("no tools, text", func(b *testing.B) {
		r, _ := openai.ParseRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"q"}],"max_tokens":200}`))
		resp := []byte(completion(40, text("stop", "a plain answer of some words")))
		parsed, _ := openai.ParseResponse(resp)
		var schemas Schemas
		b.ReportAllocs()
		for b.Loop() {
			c := ChatContract(&r.Asked)
			if vs := c.Check(PlainAnswer(&c, parsed, resp), &schemas); vs != nil {
				b.Fatal(vs)
			}
		}
	})
}
