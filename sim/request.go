package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/custody-gateway/custody/tokenize"
)

// errBadRequest marks a request the simulator refuses with 400
// invalid_request_error; the message is safe to show (no prompt text).
var errBadRequest = errors.New("invalid request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// chatRequest is the part of an OpenAI chat completion request the
// simulator reads. Unknown fields are ignored, as OpenAI-compatible
// servers do.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	// Tools and ToolChoice: a tool_choice that forces a call gets one
	// (tools.go).
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Seed                *int64          `json:"seed"`
	N                   *int            `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	Logprobs            bool            `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	// Stop and ResponseFormat are honoured as engines do (contract.go).
	Stop           json.RawMessage `json:"stop"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	// CacheSalt keys the prefix cache (vLLM's field): prefixes are shared
	// only between requests with the same salt; absent is the salt "".
	CacheSalt *string `json:"cache_salt"`
	// CachePrompt false serves the request without the prefix cache
	// (llama.cpp's field): no lookup, nothing cached.
	CachePrompt *bool `json:"cache_prompt"`
	// ChatTemplateKwargs.enable_thinking true, or a reasoning_effort
	// other than none, asks for reasoning: the answer carries
	// reasoning_content, as reasoning models' engines return it.
	ChatTemplateKwargs struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"`
	ReasoningEffort string `json:"reasoning_effort"`
}

// thinks reports whether the request asks for reasoning.
func (r *chatRequest) thinks() bool {
	if on := r.ChatTemplateKwargs.EnableThinking; on != nil {
		return *on
	}
	return r.ReasoningEffort != "" && r.ReasoningEffort != "none"
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// completionRequest is the part of a legacy completion request the
// simulator reads.
type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	MaxTokens     *int            `json:"max_tokens"`
	Temperature   *float64        `json:"temperature"`
	Seed          *int64          `json:"seed"`
	N             *int            `json:"n"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
}

// embeddingRequest is the part of an embeddings request the simulator reads.
type embeddingRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// decodeStrict unmarshals body into v, refusing bad UTF-8, trailing data
// and a non-object top level.
func decodeStrict(body []byte, v any) error {
	if !utf8.Valid(body) {
		return badRequest("body is not valid UTF-8")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return badRequest("body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return badRequest("malformed JSON: %s", jsonErrorText(err))
	}
	if dec.More() {
		return badRequest("trailing data after the JSON object")
	}
	return nil
}

// jsonErrorText describes a decoding error without quoting the body.
func jsonErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q must be %s", te.Field, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at offset %d", se.Offset)
	}
	return "cannot decode"
}

// parseChat decodes and validates a chat completion request and returns
// it with its messages as the tokenizer sees them.
func parseChat(body []byte) (*chatRequest, []tokenize.Message, error) {
	var req chatRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, nil, err
	}
	if req.Model == "" {
		return nil, nil, badRequest("model is required")
	}
	if len(req.Messages) == 0 {
		return nil, nil, badRequest("messages must be a non-empty array")
	}
	msgs := make([]tokenize.Message, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role == "" {
			return nil, nil, badRequest("messages[%d].role is required", i)
		}
		text, err := messageText(m.Content)
		if err != nil {
			return nil, nil, badRequest("messages[%d].content: %s", i, err)
		}
		msgs[i] = tokenize.Message{Role: m.Role, Name: m.Name, Content: text}
	}
	if err := checkSampling(req.MaxTokens, req.Temperature, req.N); err != nil {
		return nil, nil, err
	}
	if req.MaxCompletionTokens != nil {
		if err := checkSampling(req.MaxCompletionTokens, nil, nil); err != nil {
			return nil, nil, err
		}
	}
	if req.TopLogprobs != nil && (*req.TopLogprobs < 0 || *req.TopLogprobs > 20) {
		return nil, nil, badRequest("top_logprobs must be between 0 and 20")
	}
	if req.TopLogprobs != nil && *req.TopLogprobs > 0 && !req.Logprobs {
		return nil, nil, badRequest("top_logprobs requires logprobs")
	}
	return &req, msgs, nil
}

// messageText is the text of a message content: a string, null, or an
// array of parts of which the text parts are concatenated.
func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errors.New("bad string")
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", errors.New("must be a string or an array of content parts")
		}
		var b strings.Builder
		for j, p := range parts {
			if p.Type != "text" {
				return "", fmt.Errorf("part %d: type %q is not supported (text only)", j, p.Type)
			}
			b.WriteString(p.Text)
		}
		return b.String(), nil
	}
	return "", errors.New("must be a string or an array of content parts")
}

// parseCompletion decodes and validates a legacy completion request and
// returns its prompts (a string prompt is one prompt).
func parseCompletion(body []byte) (*completionRequest, []string, error) {
	var req completionRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, nil, err
	}
	if req.Model == "" {
		return nil, nil, badRequest("model is required")
	}
	prompts, err := stringOrStrings(req.Prompt, "prompt")
	if err != nil {
		return nil, nil, err
	}
	if err := checkSampling(req.MaxTokens, req.Temperature, req.N); err != nil {
		return nil, nil, err
	}
	return &req, prompts, nil
}

// parseEmbedding decodes and validates an embeddings request.
func parseEmbedding(body []byte) (*embeddingRequest, []string, error) {
	var req embeddingRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, nil, err
	}
	if req.Model == "" {
		return nil, nil, badRequest("model is required")
	}
	inputs, err := stringOrStrings(req.Input, "input")
	if err != nil {
		return nil, nil, err
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return nil, nil, badRequest("encoding_format must be float or base64")
	}
	if req.Dimensions != nil && (*req.Dimensions < 1 || *req.Dimensions > 4096) {
		return nil, nil, badRequest("dimensions must be between 1 and 4096")
	}
	return &req, inputs, nil
}

// stringOrStrings decodes a field that is a string or a non-empty array of
// strings.
func stringOrStrings(raw json.RawMessage, field string) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("%s is required", field)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequest("%s: bad string", field)
		}
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, badRequest("%s must be a string or an array of strings", field)
	}
	if len(ss) == 0 {
		return nil, badRequest("%s must not be empty", field)
	}
	return ss, nil
}

func checkSampling(maxTokens *int, temperature *float64, n *int) error {
	if maxTokens != nil && (*maxTokens < 1 || *maxTokens > maxMaxTokens) {
		return badRequest("max_tokens must be between 1 and %d", maxMaxTokens)
	}
	if temperature != nil && (*temperature < 0 || *temperature > 2) {
		return badRequest("temperature must be between 0 and 2")
	}
	if n != nil && *n != 1 {
		return badRequest("n must be 1")
	}
	return nil
}
