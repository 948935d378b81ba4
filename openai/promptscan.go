package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/custody-gateway/custody/internal/jsonscan"
)

// Prompt returns the prompt of r, a request to endpoint, as ParsePrompt
// does (FuzzRequestPrompt holds the two to the same prompt, and to an
// error on the same bodies). A chat request is read with the field
// scanner in place of encoding/json: r's body is valid JSON whose members
// a prompt is read from are each written once, exactly (ParseRequest's
// strict members), so comparing keys byte for byte finds what
// encoding/json's case-folding decoder would.
func (r *Request) Prompt(endpoint string) (*Prompt, error) {
	if endpoint != EndpointChat {
		return ParsePrompt(endpoint, r.Body)
	}
	b := r.Body
	var msgs, tools span
	err := eachMember(b, jsonscan.Space(b, 0), func(key []byte, vs, ve int) error {
		switch string(key) {
		case "messages":
			msgs = span{vs, ve}
		case "tools":
			tools = span{vs, ve}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p := &Prompt{}
	if msgs.end > 0 && b[msgs.start] != 'n' {
		if b[msgs.start] != '[' {
			return nil, badf("messages must be an array")
		}
		// One walk of the messages (a prompt can be megabytes): a
		// counting walk first, to size the slice, read every byte twice.
		p.Messages = make([]Message, 0, 4)
		err = eachElement(b, msgs.start, func(k, vs int) error {
			p.Messages = append(p.Messages, Message{})
			return p.scanMessage(b, vs, k)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(p.Messages) == 0 {
		return nil, badf("messages must be a non-empty array")
	}
	if tools.end > 0 && b[tools.start] != 'n' {
		if b[tools.start] != '[' {
			return nil, badf("tools must be an array")
		}
		eachElement(b, tools.start, func(int, int) error { p.ToolCount++; return nil })
		p.Tools = string(b[tools.start:tools.end])
	}
	return p, nil
}

// scanMessage reads messages[k], at b[i], into p.Messages[k], the last. A null
// message is an empty one, as encoding/json decodes it.
func (p *Prompt) scanMessage(b []byte, i, k int) error {
	switch b[i] {
	case 'n':
		return nil
	case '{':
	default:
		return badf("messages[%d] must be an object", k)
	}
	m := &p.Messages[k]
	var calls strings.Builder
	return eachMember(b, i, func(key []byte, vs, ve int) error {
		var err error
		switch string(key) {
		case "role":
			m.Role, err = scanString(b, vs, ve)
		case "name":
			m.Name, err = scanString(b, vs, ve)
		case "content":
			var media int
			m.Content, media, err = contentText(b[vs:ve])
			if err != nil {
				return badf("messages[%d].content: %s", k, err)
			}
			p.Media += media
		case "tool_calls":
			err = scanToolCalls(b, vs, m, &calls)
		}
		if err != nil {
			return badf("messages[%d].%s: %s", k, key, err)
		}
		return nil
	})
}

// scanToolCalls reads a message's tool_calls at b[i]: the names and
// arguments of their functions, appended to calls and written to m.
func scanToolCalls(b []byte, i int, m *Message, calls *strings.Builder) error {
	switch b[i] {
	case 'n':
		m.ToolCalls, m.Calls = "", 0
		return nil
	case '[':
	default:
		return errString("must be an array")
	}
	calls.Reset()
	m.Calls = 0
	err := eachElement(b, i, func(k, vs int) error {
		m.Calls++
		switch b[vs] {
		case 'n':
			return nil
		case '{':
		default:
			return errString("[" + strconv.Itoa(k) + "] must be an object")
		}
		return eachMember(b, vs, func(key []byte, fs, fe int) error {
			if string(key) != "function" || b[fs] == 'n' {
				return nil
			}
			if b[fs] != '{' {
				return errString("[" + strconv.Itoa(k) + "].function must be an object")
			}
			// The name, then the arguments, whichever the body has first.
			var fn [2]string
			err := eachMember(b, fs, func(key []byte, s, e int) error {
				j := -1
				switch string(key) {
				case "name":
					j = 0
				case "arguments":
					j = 1
				default:
					return nil
				}
				var err error
				if fn[j], err = scanString(b, s, e); err != nil {
					return errString("[" + strconv.Itoa(k) + "].function." + string(key) + ": " + err.Error())
				}
				return nil
			})
			calls.WriteString(fn[0])
			calls.WriteString(fn[1])
			return err
		})
	})
	m.ToolCalls = calls.String()
	return err
}

// scanString decodes the string or null at b[vs:ve], as encoding/json
// decodes one into a string field (null leaves it empty).
func scanString(b []byte, vs, ve int) (string, error) {
	switch b[vs] {
	case 'n':
		return "", nil
	case '"':
	default:
		return "", errString("must be a string")
	}
	if inner := b[vs+1 : ve-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil // the body is valid UTF-8 (ParseRequest)
	}
	var s string
	if err := json.Unmarshal(b[vs:ve], &s); err != nil {
		return "", errString("bad string")
	}
	return s, nil
}
