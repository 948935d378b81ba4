package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/responses"
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

// BenchmarkContractWires is the same cost on the Messages and Responses
// wires passed through: the contract from the parsed request, the answer
// read from the body (plain) or joined from its events (streamed: a call
// in two fragments), every clause held; tools as BenchmarkContract's.
func BenchmarkContractWires(b *testing.B) {
	schema := `{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":14},"units":{"enum":["metric","imperial"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["city","days"],"additionalProperties":false}`
	args := `{"city":"Oslo","days":3,"units":"metric","tags":["a","b"]}`
	for _, n := range []int{1, 10, 50} {
		mt, rt := make([]string, n), make([]string, n)
		for i := range n {
			mt[i] = fmt.Sprintf(`{"name":"tool_%d","description":"does thing %d","input_schema":%s}`, i, i, schema)
			rt[i] = fmt.Sprintf(`{"type":"function","name":"tool_%d","description":"does thing %d","parameters":%s}`, i, i, schema)
		}
		last := fmt.Sprintf("tool_%d", n-1)
		mr, err := anthropic.ParseRequest([]byte(`{"model":"m","max_tokens":200,"messages":[{"role":"user","content":"q"}],"tools":[` + strings.Join(mt, ",") + `]}`))
		if err != nil {
			b.Fatal(err)
		}
		mbody, mevents := msgAnswer("tool_use", 40, msgBlock{name: last, input: args})
		mplain, err := anthropic.ParseResponse(mbody) // as the Messages dialect parses it
		if err != nil {
			b.Fatal(err)
		}
		rr, err := responses.ParseRequest([]byte(`{"model":"m","max_output_tokens":200,"input":"q","tools":[` + strings.Join(rt, ",") + `]}`))
		if err != nil {
			b.Fatal(err)
		}
		rbody, revents := respAnswer("completed", 40, msgBlock{name: last, input: args})
		rplain, err := responses.ParseResponse(rbody) // as the Responses dialect parses it
		if err != nil {
			b.Fatal(err)
		}
		run := func(name string, contract func() Contract, plain func(*Contract) Answer) {
			b.Run(fmt.Sprintf("%s/tools=%d", name, n), func(b *testing.B) {
				var schemas Schemas
				b.ReportAllocs()
				for b.Loop() {
					c := contract()
					if vs := c.Check(plain(&c), &schemas); vs != nil {
						b.Fatal(vs)
					}
				}
			})
		}
		run("messages", func() Contract { return MessagesContract(mr) }, func(*Contract) Answer { return MessagesAnswer(mplain) })
		run("messages-stream", func() Contract { return MessagesContract(mr) }, func(c *Contract) Answer {
			s := c.NewMessagesStream()
			for _, e := range mevents {
				s.Event(e[0], []byte(e[1]))
			}
			return s.Answer()
		})
		run("responses", func() Contract { return ResponsesContract(rr) }, func(*Contract) Answer { return ResponsesAnswer(rplain) })
		run("responses-stream", func() Contract { return ResponsesContract(rr) }, func(c *Contract) Answer {
			s := c.NewResponsesStream()
			for _, e := range revents {
				s.Event(e[0], []byte(e[1]))
			}
			return s.Answer()
		})
	}
}
