package strict

import (
	"slices"
	"testing"
)

func TestDecodeObject(t *testing.T) {
	m := Members{"model": nil}
	known := map[string]bool{"model": true, "stream": true}
	o, err := DecodeObject([]byte(`{"model":"m","stream":null,"zeta":1,"alpha":2}`), m, known)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Extra, []string{"alpha", "zeta"}) {
		t.Errorf("Extra = %v, want the unknown members sorted", o.Extra)
	}
	if raw, ok := o.Present("model"); !ok || string(raw) != `"m"` {
		t.Errorf("Present(model) = %s, %v", raw, ok)
	}
	if _, ok := o.Present("stream"); ok {
		t.Error("a null member is present")
	}
	for body, want := range map[string]string{
		"{\"model\":\"\xff\"}":      "the body is not valid UTF-8",
		`{"model":`:                 "the body is not valid JSON",
		` ["model"]`:                "the body must be a JSON object",
		`{"model":"a","model":"b"}`: "",
		`{"Model":"a"}`:             "",
	} {
		_, err := DecodeObject([]byte(body), m, known)
		if err == nil || want != "" && err.Error() != want {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
