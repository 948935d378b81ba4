package strict

import "testing"

func TestCheck(t *testing.T) {
	m := Members{"model": nil, "messages": {"role": nil, "content": {"type": nil}}}
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"model":"a","messages":[{"role":"user","content":[{"type":"text"}]}],"x":{"model":1,"model":2}}`, true},
		{`{"model":"a","other":"mod\u0065l","Other":1,"other":2}`, true},
		{`[{"model":"a","model":"b"}]`, false}, // an array: each object element is checked
		{`"x"`, true},
		{`{"model":"a","model":"b"}`, false},
		{`{"model":"a","MODEL":"b"}`, false},
		{`{"mod\u0065l":"a"}`, false},
		{`{"messages":[{"role":"user"},{"role":"a","Role":"b"}]}`, false},
		{`{"messages":[{"content":[{"type":"a","type":"b"}]}]}`, false},
		{`{"messages":{"role":"a","role":"b"}}`, false},
	} {
		err := Check([]byte(tc.body), m)
		if (err == nil) != tc.ok {
			t.Errorf("Check(%s) = %v, want ok=%v", tc.body, err, tc.ok)
		}
	}
	if err := Check([]byte(`{"messages":[{"role":"a"},{"role":"a","role":"b"}]}`), m); err == nil || err.Error() != `messages[1]: duplicate member "role"` {
		t.Errorf("path: %v", err)
	}
}

func TestReplaceTop(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"model":"a","x":{"model":"b"}}`, `{"model":"up","x":{"model":"b"}}`},
		{`{ "x" : 1 , "model" :  "a" }`, `{ "x" : 1 , "model" :  "up" }`},
		{`{"messages":[{"model":"a"}],"model":"a"}`, `{"messages":[{"model":"a"}],"model":"up"}`},
		{`{"x":1}`, `{"x":1}`},
	} {
		if got := string(ReplaceTop([]byte(tc.in), "model", []byte(`"up"`))); got != tc.want {
			t.Errorf("ReplaceTop(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
