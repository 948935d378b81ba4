// Package responses is the OpenAI Responses dialect (POST /v1/responses)
// as custody reads and writes it, following the Open Responses
// specification for items and events:
//
//   - request.go parses a Responses request with strict members;
//   - tochat.go translates it, statelessly, to a chat completions body for
//     an upstream without Responses: a request that needs server state
//     (previous_response_id, conversation, item references) or a field
//     without a chat equivalent is a 400 naming it;
//   - fromchat.go and streamchat.go translate a chat completion, plain or
//     streamed, back to a Response object or typed event stream;
//   - response.go reads what custody checks in a Response (id, model,
//     usage, status);
//   - validate.go checks a Responses event stream (sequence numbers, one
//     response id, exactly one terminal event);
//   - errors.go writes custody's errors in the Responses error shape.
//
// custody never stores conversation text, so it cannot emulate
// server-side state: a Response it translates is never retrievable by id.
package responses
