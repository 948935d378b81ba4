package accounting

import (
	"testing"

	"github.com/custody-gateway/custody/template"
)

// TestLlamaCppBothRenderings: a tool schema with a float past six
// significant digits prints two ways under llama.cpp's two template
// engines. llamacpp (build unknown) is a band holding both counts; each
// rendering, once known, is exact; a request without such a number has
// one count for all three.
func TestLlamaCppBothRenderings(t *testing.T) {
	m := testModel(t, `{% for t in tools %}{{ t.function.parameters | tojson }}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}`)
	c := m.Counter
	body := `{"model":"m","messages":[{"role":"user","content":"where"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"lat":48.8606111,"lon":1234567.5}}}]}`
	pp, err := prepare(t, m, []template.Engine{template.EngineLlamaCpp}, body)
	if err != nil {
		t.Fatal(err)
	}
	counts := pp.Count()
	shortest := c.Count(`{"lat": 48.8606111, "lon": 1.2345675e+06}where`)
	stream := c.Count(`{"lat": 48.8606, "lon": 1.23457e+06}where`)
	if shortest == stream {
		t.Fatalf("the two renderings count alike (%d): the test proves nothing", shortest)
	}
	either := counts.For(template.EngineLlamaCpp)
	for _, n := range []int{shortest, stream} {
		if n < either.Band.Lo || n > either.Band.Hi {
			t.Errorf("llamacpp's band %v misses %d", either.Band, n)
		}
	}
	if got := counts.For(template.EngineLlamaCppShortest); got.Local != shortest || got.Band.Lo != shortest {
		t.Errorf("shortest: %+v, want %d exactly", got, shortest)
	}
	if got := counts.For(template.EngineLlamaCppStream); got.Local != stream || got.Band.Lo != stream {
		t.Errorf("stream: %+v, want %d exactly", got, stream)
	}

	plain := `{"model":"m","messages":[{"role":"user","content":"where"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"lat":48.5}}}]}`
	pp, err = prepare(t, m, []template.Engine{template.EngineLlamaCpp}, plain)
	if err != nil {
		t.Fatal(err)
	}
	counts = pp.Count()
	n := c.Count(`{"lat": 48.5}where`)
	for _, e := range []template.Engine{template.EngineLlamaCpp, template.EngineLlamaCppShortest, template.EngineLlamaCppStream} {
		if got := counts.For(e); got.Local != n || got.Band.Lo != n {
			t.Errorf("%s: %+v, want %d", e, got, n)
		}
	}
}
