package check

import (
	"testing"

	"github.com/custody-gateway/custody/openai"
)

// FuzzContract: any request and any answer, plain or chunked, are held to
// the contract without a panic, and every violation names a clause.
func FuzzContract(f *testing.F) {
	for _, tc := range contractCases {
		f.Add([]byte(`{"model":"m","messages":[],`+tc.request[1:]), []byte(tc.response))
	}
	f.Fuzz(func(t *testing.T, request, response []byte) {
		r, err := openai.ParseRequest(request)
		if err != nil {
			return
		}
		c := ChatContract(&r.Asked)
		resp, err := openai.ParseResponse(response)
		if err != nil {
			return
		}
		s := c.NewStream()
		s.Chunk(resp, response)
		for _, a := range []Answer{PlainAnswer(&c, resp, response), s.Answer()} {
			for _, v := range c.Check(a, nil) {
				if v.Code == "" || v.Clause == "" {
					t.Fatalf("violation without code or clause: %+v", v)
				}
			}
		}
	})
}
