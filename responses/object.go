package responses

import "encoding/json"

// Object is a Response object as custody writes it (Open Responses
// "Response"): the request's settings echoed, the output items, usage.
type Object struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"` // "response"
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"` // in_progress | completed | incomplete | failed
	Model              string             `json:"model"`
	Output             []OutputItem       `json:"output"`
	Usage              *Usage             `json:"usage"`
	Error              json.RawMessage    `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Temperature        *float64           `json:"temperature"`
	TopP               *float64           `json:"top_p"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              []Tool             `json:"tools"`
	Text               json.RawMessage    `json:"text"`
	Truncation         string             `json:"truncation"`
	Metadata           json.RawMessage    `json:"metadata"`
	User               *string            `json:"user,omitempty"`
	// Store is false: custody keeps nothing a later request could use.
	Store bool `json:"store"`
}

// OutputItem is a reasoning item (with reasoning_text parts), a message
// (with output_text parts) or a function_call.
type OutputItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role,omitempty"`
	Content []OutputText `json:"content,omitempty"`
	// Summary is a reasoning item's: always empty, custody writes none.
	Summary *[]OutputText `json:"summary,omitempty"`
	// function_call
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// OutputText is an output_text content part, or a reasoning item's
// reasoning_text part (type and text only).
type OutputText struct {
	Type        string   `json:"type"` // output_text | reasoning_text
	Text        string   `json:"text"`
	Annotations []string `json:"annotations"`
	Logprobs    []string `json:"logprobs,omitempty"`
}

// MarshalJSON writes a reasoning_text part without annotations.
func (p OutputText) MarshalJSON() ([]byte, error) {
	if p.Type == "reasoning_text" {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{p.Type, p.Text})
	}
	type plain OutputText
	return json.Marshal(plain(p))
}

// Usage is Responses usage: InputTokens includes the cached prefix,
// which InputTokensDetails.CachedTokens counts (OpenAI's semantics).
type Usage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// IncompleteDetails says why a Response is incomplete.
type IncompleteDetails struct {
	Reason string `json:"reason"` // max_output_tokens | content_filter
}

// Statuses.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
)

// ResponseID is the Response id of the chat completion chatID: the same
// upstream answer always gets the same id, so custody's replay check
// sees a replayed chat id as a replayed response id.
func ResponseID(chatID string) string { return "resp_" + chatID }

// statusOf is the status and incomplete details of a chat finish_reason;
// "" for a finish that is a failure (abort, error, unknown).
func statusOf(finish string) (string, *IncompleteDetails) {
	switch finish {
	case "stop", "tool_calls", "function_call":
		return StatusCompleted, nil
	case "length":
		return StatusIncomplete, &IncompleteDetails{"max_output_tokens"}
	case "content_filter":
		return StatusIncomplete, &IncompleteDetails{"content_filter"}
	}
	return "", nil
}

// object is the Response r's settings describe, with no output yet.
func (r *Request) object(id, model string, createdAt int64) Object {
	o := Object{ID: id, Object: "response", CreatedAt: createdAt, Status: StatusInProgress, Model: model,
		Output: []OutputItem{}, MaxOutputTokens: r.MaxOutputTokens, Temperature: r.Temperature, TopP: r.TopP,
		ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls, Tools: r.Tools,
		ToolChoice: r.ToolChoice, Text: r.Text, Truncation: "disabled", Metadata: r.Metadata}
	if r.Instructions != "" {
		o.Instructions = &r.Instructions
	}
	if r.User != "" {
		o.User = &r.User
	}
	if o.Tools == nil {
		o.Tools = []Tool{}
	}
	if len(o.ToolChoice) == 0 {
		o.ToolChoice = json.RawMessage(`"auto"`)
	}
	if len(o.Text) == 0 {
		o.Text = json.RawMessage(`{"format":{"type":"text"}}`)
	}
	if len(o.Metadata) == 0 {
		o.Metadata = json.RawMessage(`{}`)
	}
	o.Error = json.RawMessage("null")
	return o
}
