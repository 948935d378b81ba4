package check

import (
	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/openai"
)

// Finish reasons that mean the upstream gave up rather than answered.
var abortReasons = map[string]bool{"abort": true, "error": true, "cancelled": true}

// Shape fails when a 200 response is not a success: an error body, no
// choices (no data for embeddings), a finish reason that means the
// request was aborted, or zero completion tokens with finish "length".
// Serving stacks have turned internal rejections into such 200s.
func Shape(endpoint string, r *openai.Response) error {
	if r.Error != nil {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream answered 200 with an error body")
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
	for _, c := range r.Choices {
		if err := FinishReason(c.FinishReason); err != nil {
			return err
		}
		if c.FinishReason == "length" && r.Usage != nil && r.Usage.CompletionTokens == 0 {
			return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream stopped for length having generated nothing")
		}
	}
	return nil
}

// FinishReason fails on a finish reason that means the request was
// aborted (streams check it chunk by chunk).
func FinishReason(reason string) error {
	if abortReasons[reason] {
		return custody.Errorf(custody.CodeUpstreamErrorAsSuccess, "the upstream finished with %q", reason)
	}
	return nil
}
