package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/anthropic"
	"github.com/custody-gateway/custody/responses"
	"github.com/custody-gateway/custody/sse"
	"github.com/custody-gateway/custody/template"
)

// The Anthropic Messages and OpenAI Responses endpoints. A request in
// either dialect is read by custody's own dialect package, rendered as
// the chat request it means, and served by the same stack as chat
// (chatInfer: template, count, cache, prefill, decode, and every fault on
// the way); the answer is written in the dialect. The faults whose
// symptom is in the wire format take the dialect's form:
//
//   - error-as-200: the dialect's error body with 200; empty-choices and
//     abort a Message with no stop_reason or a Response failed or still
//     in_progress; empty-length max_tokens (incomplete) with no output.
//   - stream-cut: the stream ends before message_stop or the Response's
//     terminal event.
//   - stream-interleave: another stream's message_start or
//     response.created (sequence_number 0) appears after the first events.
//   - duplicate-id, response-swap: the previous id or transcript of the
//     same dialect.
//   - tool-arguments-invalid: on Messages, an input object missing the
//     schema's required properties (a tool_use input is an object).
//   - finish-tool-calls-empty: on Messages, stop_reason tool_use with no
//     tool_use block; a Response has no finish reason to carry it.
//
// model faults, usage faults, ambiguous-model, id-echo-mismatch and the
// other contract faults act as in chat.
func (s *Server) handleDialects() {
	s.mux.HandleFunc("POST /v1/messages", s.adaptWith(s.messages, writeMessagesError))
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.adaptWith(countTokens(s, anthropic.ParseCountTokens,
		func(r *anthropic.Request) string { return r.Model },
		func(n int) any { return map[string]int{"input_tokens": n} }), writeMessagesError))
	s.mux.HandleFunc("POST /v1/responses", s.adaptWith(s.responses, writeResponsesError))
	s.mux.HandleFunc("POST /v1/responses/input_tokens", s.adaptWith(countTokens(s, responses.ParseRequest,
		func(r *responses.Request) string { return r.Model },
		func(n int) any { return map[string]any{"object": "response.input_tokens", "input_tokens": n} }), writeResponsesError))
}

// writeMessagesError writes err in Anthropic's error shape.
func writeMessagesError(w http.ResponseWriter, err error) {
	var ce *custody.Error
	var status int
	var body []byte
	if errors.As(err, &ce) {
		status, body = ce.Status(), anthropic.ErrorBody(ce)
	} else {
		ae := asAPIError(err)
		status = ae.status
		body, _ = json.Marshal(map[string]any{"type": "error", "error": map[string]string{
			"type": anthropic.ErrorType(ae.status), "message": ae.code + ": " + ae.msg}})
	}
	writeStatusBody(w, status, body)
}

// writeResponsesError writes err in the Responses (OpenAI) error shape.
func writeResponsesError(w http.ResponseWriter, err error) {
	var ce *custody.Error
	if errors.As(err, &ce) {
		writeStatusBody(w, ce.Status(), responses.ErrorBody(ce))
		return
	}
	writeError(w, err)
}

func writeStatusBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// dialectAnswer runs a dialect request's chat translation through the
// stack and returns what chat would have answered, ready to translate:
// the head (id from the dialect's own sequence), usage, and the
// error-as-200 form in force. The caller releases res.
func (s *Server) dialectAnswer(c *call, dialect string, chatBody []byte) (*result, envelope, *usage, Fault, error) {
	creq, res, err := s.chatInfer(c, chatBody)
	if err != nil {
		return nil, envelope{}, nil, "", err
	}
	form := c.faults.errorAs200Form(res.digest)
	res.tokens, res.finish = shapeError200(form, res.tokens, res.finish)
	if form != "" {
		res.reasoning = nil // an error's shape is the answer's alone
	}
	head, u := s.chatHead(c, creq, res)
	head.ID = s.responseID(dialect, "", c.faults[FaultDuplicateID])
	return res, head, u, form, nil
}

// messages serves POST /v1/messages.
func (s *Server) messages(c *call) error {
	req, err := anthropic.ParseRequest(c.body)
	if err != nil {
		return err
	}
	chatBody, err := req.ToChat()
	if err != nil {
		return err
	}
	res, head, u, form, err := s.dialectAnswer(c, "messages", chatBody)
	if err != nil {
		return err
	}
	defer res.release()
	if c.faults[FaultToolArgumentsInvalid] && res.call != nil {
		// A tool_use input is an object on this wire: the fault's form
		// here is one that misses every property the schema requires.
		res.call.Arguments = messagesBrokenInput
	}
	if req.Stream {
		return s.writeEvents(c, "messages-stream", s.messageEvents(c, head, res, u, form))
	}
	if err := sleep(c.r.Context(), time.Duration(len(res.tokens))*s.cfg.TokenDelay); err != nil {
		return err
	}
	var body []byte
	switch form {
	case FaultErrorAs200Body:
		body = []byte(`{"type":"error","error":{"type":"api_error","message":"prefill rejected the request: prompt too long"}}`)
	case FaultErrorAs200Empty, FaultErrorAs200Abort:
		text := content(res.tokens)
		m := anthropic.MessageBody{ID: anthropic.MessageID(head.ID), Type: "message", Role: "assistant", Model: head.Model,
			Content: []anthropic.OutBlock{}, Usage: anthropic.Usage{InputTokens: u.PromptTokens, OutputTokens: len(res.tokens)}}
		if form == FaultErrorAs200Abort {
			m.Content = append(m.Content, anthropic.OutBlock{Type: "text", Text: &text})
		}
		body, _ = json.Marshal(m)
	default:
		// finish-tool-calls-empty: the translation refuses a tool_calls
		// finish without a call, so the Message is written as a stop and
		// its stop_reason made tool_use, with no tool_use block.
		noCall := res.finish == "tool_calls" && res.call == nil
		if noCall {
			res.finish = "stop"
		}
		chat, err := chatCompletionBody(head, u, res, false, "")
		if err != nil {
			return err
		}
		if body, err = anthropic.FromChat(chat); err != nil {
			return err
		}
		if noCall {
			body = setMember(body, "stop_reason", anthropic.StopToolUse)
		}
	}
	writeBody(c.w, s.swapBody("messages", body, c.faults[FaultResponseSwap]))
	return nil
}

// messagesBrokenInput is the input of a tool_use under
// tool-arguments-invalid on the Messages wire.
const messagesBrokenInput = `{"broken":true}`

// messageEvents is the Messages stream of an answer, one group of events
// per chat chunk.
func (s *Server) messageEvents(c *call, head envelope, res *result, u *usage, form Fault) [][]byte {
	chunks := chatStreamEvents(head, res, false, true, form, u.PromptTokensDetails)
	var tr anthropic.StreamTranslator
	var groups [][]byte
	if form == FaultErrorAs200Body {
		// The stream starts, then the upstream's error event.
		first, _ := tr.Chunk([]byte(`{"id":"` + head.ID + `","model":` + strconv.Quote(head.Model) + `,"choices":[]}`))
		return [][]byte{append([]byte(nil), first...), sse.AppendEvent(nil, "error",
			json.RawMessage(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))}
	}
	return s.translated(c, &tr, groups, chunks, form, tr.EndWithoutStop, func(otherID string) []byte {
		return sse.AppendEvent(nil, "message_start", map[string]any{"type": "message_start",
			"message": anthropic.MessageBody{ID: anthropic.MessageID(otherID), Type: "message", Role: "assistant",
				Model: head.Model, Content: []anthropic.OutBlock{}}})
	}, head)
}

// countTokens serves a count-tokens endpoint, POST
// /v1/messages/count_tokens or POST /v1/responses/input_tokens: the
// prompt parse reads (for the model model names), as chat would render
// and count it, in the body answer makes of the count.
func countTokens[R interface{ ToChat() ([]byte, error) }](s *Server, parse func([]byte) (R, error), model func(R) string, answer func(n int) any) func(*call) error {
	return func(c *call) error {
		req, err := parse(c.body)
		if err != nil {
			return err
		}
		if err := s.checkModel(model(req)); err != nil {
			return err
		}
		chatBody, err := req.ToChat()
		if err != nil {
			return err
		}
		n, err := s.countChat(chatBody)
		if err != nil {
			return err
		}
		return writeJSON(c.w, answer(n))
	}
}

// countChat is the token count of a chat body's rendered prompt, as
// chatInfer counts it.
func (s *Server) countChat(body []byte) (int, error) {
	if _, _, err := parseChat(body); err != nil {
		return 0, err
	}
	rendered, err := s.tmpl.Render(template.EngineLlamaCpp, body)
	if err != nil {
		return 0, badRequest("%s", err)
	}
	return s.counter.Count(rendered.Text), nil
}

// responses serves POST /v1/responses.
func (s *Server) responses(c *call) error {
	req, err := responses.ParseRequest(c.body)
	if err != nil {
		return err
	}
	chatBody, err := req.ToChat()
	if err != nil {
		return err
	}
	res, head, u, form, err := s.dialectAnswer(c, "responses", chatBody)
	if err != nil {
		return err
	}
	defer res.release()
	if req.Stream {
		return s.writeEvents(c, "responses-stream", s.responseEvents(c, req, head, res, u, form))
	}
	if err := sleep(c.r.Context(), time.Duration(len(res.tokens))*s.cfg.TokenDelay); err != nil {
		return err
	}
	var body []byte
	switch form {
	case FaultErrorAs200Body:
		body = errorAs200Body()
	default:
		f := form
		if f == FaultErrorAs200Empty || f == FaultErrorAs200Abort {
			res.finish = "stop"
		}
		chat, err := chatCompletionBody(head, u, res, false, "")
		if err != nil {
			return err
		}
		if body, err = req.FromChat(chat, head.Created); err != nil {
			return err
		}
		switch f {
		case FaultErrorAs200Empty:
			body = setStatus(body, responses.StatusFailed, true)
		case FaultErrorAs200Abort:
			body = setStatus(body, responses.StatusInProgress, false)
		}
	}
	writeBody(c.w, s.swapBody("responses", body, c.faults[FaultResponseSwap]))
	return nil
}

// setStatus rewrites a Response's status (and, empty, drops its output).
func setStatus(body []byte, status string, empty bool) []byte {
	body = setMember(body, "status", status)
	if empty {
		body = setMember(body, "output", json.RawMessage("[]"))
	}
	return body
}

// setMember rewrites one top-level member of a JSON object.
func setMember(body []byte, name string, v any) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m[name], _ = json.Marshal(v)
	out, _ := json.Marshal(m)
	return out
}

// responseEvents is the Responses stream of an answer, one group of
// events per chat chunk.
func (s *Server) responseEvents(c *call, req *responses.Request, head envelope, res *result, u *usage, form Fault) [][]byte {
	tr := req.NewStreamTranslator(head.Created)
	var groups [][]byte
	if form == FaultErrorAs200Body {
		first, _ := tr.Chunk([]byte(`{"id":"` + head.ID + `","model":` + strconv.Quote(head.Model) + `,"choices":[]}`))
		groups = append(groups, append([]byte(nil), first...))
		return append(groups, sse.AppendEvent(nil, "error", map[string]any{"type": "error",
			"sequence_number": 2, "code": "server_error", "message": "prefill rejected the request"}))
	}
	chunks := chatStreamEvents(head, res, false, true, form, u.PromptTokensDetails)
	return s.translated(c, tr, groups, chunks, form, tr.EndFailed, func(otherID string) []byte {
		return sse.AppendEvent(nil, "response.created", map[string]any{"type": "response.created",
			"sequence_number": 0, "response": map[string]any{"id": responses.ResponseID(otherID), "object": "response",
				"model": head.Model, "status": "in_progress", "output": []any{}}})
	}, head)
}

// streamTranslator is a front's stream translator (anthropic's,
// responses') as the simulator drives it.
type streamTranslator interface {
	Chunk(chunk []byte) ([]byte, error)
	End() ([]byte, error)
}

// translated appends to groups the chat chunks of an answer run through
// tr, one group of events per chunk, then the stream's end. The
// error-as-200 forms drop the abort finish and end with endFailed; a
// stream cut loses its last event; an interleaved stream gets another
// stream's first event (foreign, given that stream's id) after its first
// two groups.
func (s *Server) translated(c *call, tr streamTranslator, groups, chunks [][]byte, form Fault, endFailed func() []byte, foreign func(otherID string) []byte, head envelope) [][]byte {
	failed := form == FaultErrorAs200Empty || form == FaultErrorAs200Abort
	for _, ch := range chunks {
		if failed && containsFinish(ch, "abort") {
			continue
		}
		b, err := tr.Chunk(ch)
		if err != nil {
			break
		}
		groups = append(groups, append([]byte(nil), b...))
	}
	var end []byte
	if failed {
		end = append([]byte(nil), endFailed()...)
	} else {
		b, _ := tr.End()
		end = append([]byte(nil), b...)
	}
	if c.faults[FaultStreamCut] {
		end = cutLastEvent(end)
	}
	groups = append(groups, end)
	if c.faults[FaultStreamInterleave] && len(groups) > 2 {
		other := s.otherStream(streamHead{id: head.ID, created: head.Created})
		groups = append(groups[:2], append([][]byte{foreign(other.id)}, groups[2:]...)...)
	}
	return groups
}

// containsFinish reports whether a chat chunk finishes with reason.
func containsFinish(chunk []byte, reason string) bool {
	var c struct {
		Choices []struct {
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(chunk, &c) != nil {
		return false
	}
	for _, ch := range c.Choices {
		if ch.FinishReason != nil && *ch.FinishReason == reason {
			return true
		}
	}
	return false
}

// cutLastEvent drops the last SSE event of b (stream-cut).
func cutLastEvent(b []byte) []byte {
	if len(b) < 2 {
		return b
	}
	body := b[:len(b)-2] // the last event's blank line
	for i := len(body) - 1; i > 0; i-- {
		if body[i] == '\n' && body[i-1] == '\n' {
			return b[:i+1]
		}
	}
	return nil
}

// writeEvents writes a dialect's SSE stream, one token delay before each
// group after the first; under response-swap the previous transcript of
// kind is sent instead. No [DONE]: neither dialect has one.
func (s *Server) writeEvents(c *call, kind string, groups [][]byte) error {
	var transcript []byte
	for _, g := range groups {
		transcript = append(transcript, g...)
	}
	out := s.swapBody(kind, transcript, c.faults[FaultResponseSwap])
	swapped := len(out) > 0 && len(transcript) > 0 && &out[0] != &transcript[0]
	c.w.Header().Set("Content-Type", "text/event-stream")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	if swapped || s.cfg.TokenDelay == 0 {
		_, err := c.w.Write(out)
		return wroteStream(err)
	}
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		if i > 0 {
			if err := sleep(c.r.Context(), s.cfg.TokenDelay); err != nil {
				return wroteStream(err)
			}
		}
		if _, err := c.w.Write(g); err != nil {
			return wroteStream(err)
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	return nil
}
