package gateway

import (
	"fmt"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/check"
	"github.com/custody-gateway/custody/openai"
	"github.com/custody-gateway/custody/policy"
)

// The contract check's glue (check/contract.go): the contract is read
// from the chat request the upstream received, the wire's, so that a
// Messages or Responses client translated to chat is held to what custody
// sent for it, and its answer is judged on the chat wire before it is
// translated back (a tool_calls finish without calls is caught before it
// becomes a tool_use stop with no block). Answers on other wires (legacy
// completions, embeddings, a Messages or Responses upstream passed
// through) are not held to a contract yet: no outcome is recorded.

// chatContract is the contract of the attempt's request, when the
// upstream speaks chat completions.
func (x *exchange) chatContract() (*check.Contract, bool) {
	if x.wire != openaiChat || !x.g.checks.runs(custody.CheckContract) {
		return nil, false
	}
	q, ok := x.wreq.(*openaiRequest)
	if !ok {
		return nil, false
	}
	c := check.ChatContract(&q.r.Asked)
	return &c, true
}

// checkContractPlain holds a complete chat completion to its contract.
func (x *exchange) checkContractPlain(r *openai.Response, body []byte) {
	if r == nil {
		return
	}
	if c, ok := x.chatContract(); ok {
		x.judgeContract(c, check.PlainAnswer(c, r, body))
	}
}

// contractChunk adds one chat chunk to the stream's answer. Nothing is
// held: the chunk is relayed as the other checks let it, and the contract
// is judged once the answer is whole, before its terminal event is
// released.
func (x *exchange) contractChunk(chunk *openai.Response, data []byte) {
	if chunk == nil {
		return
	}
	if x.contract == nil {
		c, ok := x.chatContract()
		if !ok {
			return
		}
		x.contract = c.NewStream()
	}
	x.contract.Chunk(chunk, data)
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
		// Arguments that are not an object cannot become a Messages
		// tool_use input: served, they would be a translation failure.
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
