package eval

import (
	"encoding/json"
	"errors"
)

// answer is what the assertions read from a chat completion.
type answer struct {
	Content     string
	ToolCalls   []toolCall
	Model       string
	Fingerprint string
	Prompt      int // usage.prompt_tokens
	Completion  int // usage.completion_tokens
}

type toolCall struct {
	Name      string
	Arguments string
}

var errNoChoice = errors.New("the answer has no choice")

// readAnswer reads the first choice of an OpenAI chat completion.
func readAnswer(body []byte) (answer, error) {
	var r struct {
		Model       string `json:"model"`
		Fingerprint string `json:"system_fingerprint"`
		Choices     []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, errors.New("the answer is not a chat completion")
	}
	a := answer{Model: r.Model, Fingerprint: r.Fingerprint, Prompt: r.Usage.Prompt, Completion: r.Usage.Completion}
	if len(r.Choices) == 0 {
		return a, errNoChoice
	}
	msg := r.Choices[0].Message
	if msg.Content != nil {
		a.Content = *msg.Content
	}
	for _, tc := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, toolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return a, nil
}
