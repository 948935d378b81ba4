package responses

import (
	"encoding/json"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/sse"
)

type errorEnvelope struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    string  `json:"code"`
	Param   *string `json:"param"`
}

// ErrorBody is the Responses error shape of a custody error, the OpenAI
// one: {"error":{"message","type","code","param"}} with custody's code.
func ErrorBody(e *custody.Error) []byte {
	o := errorObject{Message: e.Message, Type: e.Code.Type(), Code: string(e.Code)}
	if e.Param != "" {
		o.Param = &e.Param
	}
	b, _ := json.Marshal(errorEnvelope{o})
	return b
}

// ErrorEvent is the event that ends a Responses stream already started
// with a custody error: an "error" event (Open Responses), which the
// OpenAI SDKs raise on. seq is the next sequence_number.
func ErrorEvent(e *custody.Error, seq int) []byte {
	o := map[string]any{"type": "error", "sequence_number": seq, "code": string(e.Code), "message": e.Message, "param": nil}
	if e.Param != "" {
		o["param"] = e.Param
	}
	return sse.AppendEvent(nil, "error", o)
}
