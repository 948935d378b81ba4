package eval

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Suite is a loaded evaluation suite.
type Suite struct {
	Name string
	File string
	// Digest is SHA-256 of the file's bytes: the suite's identity in
	// reports, baselines and the ledger.
	Digest [32]byte
	Cases  []Case
	// Routes covered, as MODEL/PROVIDER; empty means every route.
	Routes []string
	// Interval between scheduled runs; 0 means none.
	Interval time.Duration
	// Threshold is the pass ratio a run needs, in [0, 1].
	Threshold float64
	// ContractPassRate is the share of the run's answers the contract
	// check must find honouring their request, in [0, 1]; 0 requires
	// nothing (contract.go).
	ContractPassRate float64
	// Rate bounds the requests per second of one run; 0 means 2.
	Rate float64
}

// Covers reports whether the suite applies to the route MODEL/PROVIDER.
func (s *Suite) Covers(route string) bool {
	if len(s.Routes) == 0 {
		return true
	}
	for _, r := range s.Routes {
		if r == route {
			return true
		}
	}
	return false
}

// Case is one line of a suite.
type Case struct {
	ID      string
	Line    int // in the suite file
	Request Request
	Assert  Assert
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is a case's chat completion request, without its model (the
// route's client-facing model is set by Body).
type Request struct {
	Messages    []Message
	Tools       json.RawMessage // as written in the case: a JSON array
	ToolChoice  json.RawMessage
	Temperature *float64
	TopP        *float64
	Seed        *int64
	MaxTokens   int
}

// Body encodes r as an OpenAI chat completion request for model.
func (r Request) Body(model string) ([]byte, error) {
	w := struct {
		Model       string          `json:"model"`
		Messages    []Message       `json:"messages"`
		Tools       json.RawMessage `json:"tools,omitempty"`
		ToolChoice  json.RawMessage `json:"tool_choice,omitempty"`
		Temperature *float64        `json:"temperature,omitempty"`
		TopP        *float64        `json:"top_p,omitempty"`
		Seed        *int64          `json:"seed,omitempty"`
		MaxTokens   int             `json:"max_tokens,omitempty"`
	}{model, r.Messages, r.Tools, r.ToolChoice, r.Temperature, r.TopP, r.Seed, r.MaxTokens}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding eval request: %w", err)
	}
	return b, nil
}

// Assert is what a case's answer must meet; every assertion set must
// hold. Text assertions read the first choice's message content.
type Assert struct {
	Contains    []string
	NotContains []string
	Regex       *regexp.Regexp
	// Equals is compared with the content, surrounding white space
	// trimmed from both.
	Equals *string
	// JSONSchema: the content must be JSON valid under the schema.
	JSONSchema *Schema
	// ToolCall: the answer must call a tool of this name, with arguments
	// valid under the schema when one is given.
	ToolCall *ToolCallAssert
	// MaxLatency bounds the whole call (custody's checks included).
	MaxLatency time.Duration
}

// ToolCallAssert is the tool_call assertion.
type ToolCallAssert struct {
	Name      string
	Arguments *Schema // nil: any arguments
}
