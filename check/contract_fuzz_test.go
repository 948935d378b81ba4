package check

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/responses"
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

// FuzzContractWires: any Messages or Responses answer, plain or as any
// sequence of events, is held to the contract without a panic, and every
// violation names a clause. events is split into events at newlines, each
// "type data".
func FuzzContractWires(f *testing.F) {
	for _, tc := range messagesCases {
		plain, events := msgAnswer(tc.stop, tc.tokens, tc.blocks...)
		f.Add(true, []byte(tc.request), plain, joinEvents(events))
	}
	for _, tc := range responsesCases {
		plain, events := respAnswer(tc.status, tc.tokens, tc.blocks...)
		f.Add(false, []byte(tc.request), plain, joinEvents(events))
	}
	f.Fuzz(func(t *testing.T, messages bool, members, plain, events []byte) {
		var c Contract
		var a Answer
		var s interface{ Answer() Answer }
		if messages {
			r, err := anthropic.ParseRequest(wireRequest(`{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"q"}]`, members))
			if err != nil {
				return
			}
			c = MessagesContract(r)
			if parsed, err := anthropic.ParseResponse(plain); err == nil {
				a = MessagesAnswer(parsed)
				if want := messagesAnswerOfBody(plain); !reflect.DeepEqual(a, want) {
					t.Fatalf("MessagesAnswer %+v, the body's %+v", a, want)
				}
			}
			ms := c.NewMessagesStream()
			for _, e := range bytes.Split(events, []byte("\n")) {
				typ, data, _ := bytes.Cut(e, []byte(" "))
				ms.Event(string(typ), data)
			}
			s = ms
		} else {
			r, err := responses.ParseRequest(wireRequest(`{"model":"m","input":"q"`, members))
			if err != nil {
				return
			}
			c = ResponsesContract(r)
			if parsed, err := responses.ParseResponse(plain); err == nil {
				a = ResponsesAnswer(parsed)
				if want := responsesAnswerOfBody(plain); !reflect.DeepEqual(a, want) {
					t.Fatalf("ResponsesAnswer %+v, the body's %+v", a, want)
				}
			}
			rs := c.NewResponsesStream()
			for _, e := range bytes.Split(events, []byte("\n")) {
				typ, data, _ := bytes.Cut(e, []byte(" "))
				rs.Event(string(typ), data)
			}
			s = rs
		}
		for _, a := range []Answer{a, s.Answer()} {
			for _, v := range c.Check(a, nil) {
				if v.Code == "" || v.Clause == "" {
					t.Fatalf("violation without code or clause: %+v", v)
				}
			}
		}
	})
}

func joinEvents(events [][2]string) []byte {
	var b []byte
	for _, e := range events {
		b = append(append(append(append(b, e[0]...), ' '), e[1]...), '\n')
	}
	return b
}

func wireRequest(head string, members []byte) []byte {
	if len(members) == 0 {
		return []byte(head + "}")
	}
	return []byte(head + "," + string(members) + "}")
}
