package check

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// Finish reasons that mean the upstream gave up rather than answered.
var abortReasons = map[string]bool{"abort": true, "error": true, "cancelled": true}

// finishReasons are the finish reasons of an answer; any other is not
// one (a client SDK, a translator to another dialect, has no meaning for
// it).
var finishReasons = map[string]bool{"stop": true, "length": true, "tool_calls": true,
	"content_filter": true, "function_call": true}

// Shape fails when a 200 response is not a success: an error body, no
// choices (no data for embeddings), a choice that is not an answer (no
// message in a chat completion, a finish reason null, unknown, or one
// that means the request was aborted), two choices at one index, zero
// completion tokens with finish "length", or usage out of range.
// Serving stacks have turned internal rejections into such 200s; a
// malicious upstream sends them to reach a path no check covers (the
// translators, which would otherwise answer 500). How many choices the
// request asked for is the exchange's to check (Choices).
func Shape(endpoint string, r *openai.Response) error {
	if r.Error != nil {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with an error body")
	}
	if err := Usage(r.Usage); err != nil {
		return err
	}
	if endpoint == openai.EndpointEmbeddings {
		if len(r.Data) == 0 {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with no embeddings")
		}
		return nil
	}
	if len(r.Choices) == 0 {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with no choices")
	}
	for i, c := range r.Choices {
		if err := FinishReason(c.FinishReason); err != nil {
			return err
		}
		if c.FinishReason == "" {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's choice %d has no finish_reason", i)
		}
		if endpoint == openai.EndpointChat && !c.HasMessage {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream's choice %d has no message", i)
		}
		for _, d := range r.Choices[:i] {
			if d.Index == c.Index {
				return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream sent two choices at index %d", c.Index)
			}
		}
		if c.FinishReason == "length" && r.Usage != nil && r.Usage.CompletionTokens == 0 {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream stopped for length having generated nothing")
		}
	}
	return nil
}

// FinishReason fails on a finish reason that means the request was
// aborted, or that is none custody knows (streams check it chunk by
// chunk); "" (null, absent: a stream's chunk before the last) passes.
func FinishReason(reason string) error {
	switch {
	case reason == "" || finishReasons[reason]:
		return nil
	case abortReasons[reason]:
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream finished with %q", reason)
	}
	return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream finished with an unknown finish_reason")
}

// Choices fails when a response carries more choices than the request
// asked for (asked: the request's n, 1 when absent); got is the number of
// choices, or in a stream the highest choice index seen plus one. A
// second choice nobody asked for is another answer: which of the two the
// client reads (and a translator keeps) is not known.
func Choices(got, asked int) error {
	if asked < 1 {
		asked = 1
	}
	if got > asked {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered with %d choices where %d were asked for", got, asked)
	}
	return nil
}
