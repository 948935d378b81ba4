package sqlite

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// FuzzStrings stores upstream-reported strings (model, response id used
// as a claim key) of any bytes: Put must accept them, Get return them as
// JSON keeps them, Search find them, and claims keep keys exact.
func FuzzStrings(f *testing.F) {
	f.Add("glm-5.3-0827", "chatcmpl-1")
	f.Add("m\x00odel\xff", "id\x00\xfe")
	f.Add("", "\xff")
	x, err := Open(f.Context(), fresh(f))
	if err != nil {
		f.Fatal(err)
	}
	defer x.Close()
	n := 0
	f.Fuzz(func(t *testing.T, model, key string) {
		n++
		id := fmt.Sprintf("req-%d", n)
		r := index.Record{Transaction: custody.Transaction{ID: id, Time: time.Unix(0, int64(n)), ResponseModel: model}, LeafIndex: -1}
		if err := x.Put(t.Context(), r); err != nil {
			t.Fatalf("Put: %v", err)
		}
		got, err := x.Get(t.Context(), id)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		b, _ := json.Marshal(model)
		var want string
		json.Unmarshal(b, &want)
		if got.ResponseModel != want {
			t.Fatalf("ResponseModel = %q, want %q", got.ResponseModel, want)
		}
		if model != "" {
			rs, err := x.Search(t.Context(), index.Query{Model: model, Limit: index.MaxLimit})
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			found := false
			for _, r := range rs {
				found = found || r.ID == id
			}
			if !found {
				t.Fatalf("Search by model %q did not find %s", model, id)
			}
		}
		if key == "" {
			return
		}
		k := key + "\x00" + id // fresh per input
		if h, err := x.ClaimResponse(t.Context(), k, id, time.Minute); err != nil || h != id {
			t.Fatalf("first claim = %q, %v", h, err)
		}
		if h, err := x.ClaimResponse(t.Context(), k, "other", time.Minute); err != nil || h != id {
			t.Fatalf("second claim = %q, %v", h, err)
		}
	})
}
