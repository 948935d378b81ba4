package gateway

import (
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/policy"
)

// The contract check's glue (check/contract.go): the contract is read
// from the request the upstream received, the wire's, and the answer is
// judged on that wire before it is translated back or relayed. On the
// chat wire the contract is the chat request's, so that a Messages or
// Responses client translated to chat is held to what custody sent for
// it, and its answer is judged as chat (a tool_calls finish without calls
// is caught before it becomes a tool_use stop with no block). A Messages
// request passed through to a kind: anthropic provider is held to its
// own members (check.MessagesContract), a Responses request passed
// through to a provider with responses: true to its own
// (check.ResponsesContract), their answers read on their wire. Answers on
// the other wires (legacy completions, embeddings) are not held to a
// contract: no outcome is recorded.

// wireContract is the contract of the attempt's request, when its wire
// has one.
func (x *exchange) wireContract() (check.Contract, bool) {
	if !x.g.checks.runs(custody.CheckContract) {
		return check.Contract{}, false
	}
	var c check.Contract
	switch q := x.wreq.(type) {
	case *openaiRequest:
		if x.wire != openaiChat {
			return check.Contract{}, false
		}
		c = check.ChatContract(&q.r.Asked)
	case *messagesRequest:
		c = check.MessagesContract(q.r)
	case *responsesRequest:
		c = check.ResponsesContract(q.r)
	default:
		return check.Contract{}, false
	}
	return c, true
}

// checkContractPlain holds a complete answer (r as the wire read it,
// body its bytes) to its contract.
func (x *exchange) checkContractPlain(r *Reading, body []byte) {
	c, ok := x.wireContract()
	if !ok {
		return
	}
	switch x.wire {
	case openaiChat:
		if r.Chat != nil {
			x.judgeContract(&c, check.PlainAnswer(&c, r.Chat, body))
		}
	case messages:
		if r.Messages != nil {
			x.judgeContract(&c, check.MessagesAnswer(r.Messages))
		}
	case responsesFront:
		if r.Responses != nil {
			x.judgeContract(&c, check.ResponsesAnswer(r.Responses))
		}
	}
}

// contractStream joins a stream's answer on its wire
// (check.ContractStream, MessagesStream, ResponsesStream).
type contractStream interface {
	Answer() check.Answer
	Contract() *check.Contract
}

// contractEvent adds one event of the stream to its answer (ev as the
// wire read it; name and data the event as it came). Nothing is held: the
// event is relayed as the other checks let it, and the contract is judged
// once the answer is whole, before its terminal event is released.
func (x *exchange) contractEvent(ev *Event, name, data []byte) {
	if x.contract == nil {
		if x.noContract {
			return
		}
		wc, ok := x.wireContract()
		if !ok {
			x.noContract = true
			return
		}
		c := &wc // the stream keeps it
		switch x.wire {
		case messages:
			x.contract = c.NewMessagesStream()
		case responsesFront:
			x.contract = c.NewResponsesStream()
		default:
			x.contract = c.NewStream()
		}
	}
	switch s := x.contract.(type) {
	case *check.ContractStream:
		if ev.Chunk != nil {
			s.Chunk(ev.Chunk, data)
		}
	case *check.MessagesStream:
		s.Event(eventName(name, data), data)
	case *check.ResponsesStream:
		s.Event(eventName(name, data), data)
	}
}

// eventName is an event's type: its SSE name, else its data's type (the
// stream reader held the two to agree).
func eventName(name, data []byte) string {
	if len(name) > 0 {
		return string(name)
	}
	return eventType(data)
}

// checkContractStream judges the stream's joined answer.
func (x *exchange) checkContractStream() {
	if x.contract != nil {
		x.judgeContract(x.contract.Contract(), x.contract.Answer())
	}
}

// judgeContract records the contract's outcome: one outcome for the
// check, the broken clause that decides the verdict named by its code
// (the first that rejects under the policy's on_contract, else the
// first), the others counted in its detail.
func (x *exchange) judgeContract(c *check.Contract, a check.Answer) {
	vs := c.Check(a, &x.g.schemas)
	if len(vs) == 0 {
		x.tx.Pass(custody.CheckContract, "")
		return
	}
	pick, reject := vs[0], false
	for _, v := range vs {
		// Arguments that are not an object cannot be a Messages
		// tool_use input: translated, they would be a translation
		// failure; passed through (a stream's input_json_delta that
		// never joins into an object), an input no client can read.
		if policy.ContractRejects(x.policy.OnContract, v.Stack) || v.NotObject && x.front == messages {
			pick, reject = v, true
			break
		}
	}
	detail := "the answer breaks what the request asked for: " + pick.Detail
	if len(vs) > 1 {
		detail += fmt.Sprintf(" (and %d more broken clauses)", len(vs)-1)
	}
	if reject {
		x.tx.Fail(custody.CheckContract, pick.Code, detail)
	} else {
		x.tx.Flag(custody.CheckContract, pick.Code, detail)
	}
}
