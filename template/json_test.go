package template

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/ardanlabs/jinja"
)

// plain turns a decoded value into what encoding/json (UseNumber)
// decodes, keys in order as [key, value] pairs.
func plain(v jinja.Value) any {
	switch {
	case v.IsNone():
		return nil
	case v.IsBool():
		return v.AsBool()
	case v.IsInt():
		return float64(v.AsInt())
	case v.IsFloat():
		return v.AsFloat()
	case v.IsString():
		return v.AsString()
	case v.IsList():
		out := []any{}
		for _, it := range v.AsList().Items {
			out = append(out, plain(it))
		}
		return out
	case v.IsDict():
		d := v.AsDict()
		out := map[string]any{}
		for _, k := range d.Keys {
			out[k] = plain(d.Data[k])
		}
		return out
	}
	return "undefined"
}

func reference(data []byte) (any, error) {
	var v any
	err := json.Unmarshal(data, &v)
	return v, err
}

// FuzzDecode holds the request decoder to encoding/json: the same
// verdict on validity, the same values (duplicate keys: the last wins in
// both), and ints kept apart from floats.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,-0.0,1e3,"x\u00e9\ud83d\ude00\ud800",true,false,null]}`, `"\uDFFF\\\/\b\f\n\r\t"`,
		"\"\xff\xfe ok \xe2\x82\"", `[]`, `{}`, ` 12 `, `{"a":1,"a":2}`, `01`, `1.`, `-`, `"\u12"`, `[1,]`, `{"a" 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decode(data)
		want, werr := reference(data)
		var te *json.UnmarshalTypeError
		if errors.As(werr, &te) {
			// A number out of float64's range: encoding/json refuses it,
			// decode keeps its text (Python would keep a big int).
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("decode err %v, encoding/json err %v, on %q", err, werr, data)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(plain(got), want) {
			t.Fatalf("decode %#v, encoding/json %#v, on %q", plain(got), want, data)
		}
	})
}

func TestDecodeKeepsOrderAndInts(t *testing.T) {
	v, err := decode([]byte(`{"z":1,"a":2.0,"m":[3,4e0]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := v.AsDict()
	if !reflect.DeepEqual(d.Keys, []string{"z", "a", "m"}) || !d.Data["z"].IsInt() || !d.Data["a"].IsFloat() ||
		!d.Data["m"].AsList().Items[0].IsInt() || !d.Data["m"].AsList().Items[1].IsFloat() {
		t.Errorf("decoded %v", plain(v))
	}
}
