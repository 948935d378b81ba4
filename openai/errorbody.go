package openai

import "encoding/json"

// ErrorEnvelope is the OpenAI error shape:
// {"error":{"message":...,"type":...,"code":...,"param":null}}.
type ErrorEnvelope struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is the inside of an ErrorEnvelope.
type ErrorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    string  `json:"code"`
	Param   *string `json:"param"`
}

// ErrorBody encodes an ErrorEnvelope; an empty param is null.
func ErrorBody(message, typ, code, param string) []byte {
	e := ErrorEnvelope{ErrorObject{Message: message, Type: typ, Code: code}}
	if param != "" {
		e.Error.Param = &param
	}
	b, _ := json.Marshal(e)
	return b
}
