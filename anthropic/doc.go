// Package anthropic is the Anthropic Messages dialect (POST /v1/messages
// and /v1/messages/count_tokens) as custody reads and writes it:
//
//   - request.go parses a Messages request with strict members (the
//     members custody reads appear once, exactly spelled) and typed blocks;
//   - tochat.go translates a Messages request to an OpenAI chat
//     completions body, for a Messages client in front of an openai
//     provider; a field without an equivalent is a 400 naming it, never
//     dropped;
//   - fromchat.go and streamchat.go translate a chat completion, plain or
//     streamed, back to a Messages response or event stream;
//   - response.go reads what custody checks in a Messages response (id,
//     model, usage with Anthropic's cache semantics, failure shapes);
//   - validate.go checks the order of a Messages event stream;
//   - errors.go writes custody's errors in the Anthropic error shape.
//
// Errors are *custody.Error with custody's codes, so that one code names
// one outcome in every dialect.
package anthropic
