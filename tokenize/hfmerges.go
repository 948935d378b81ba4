package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// hfMerges is tokenizer.json's model.merges, each merge either "a b" or
// ["a", "b"]. It is decoded by hand: Gemma-3 has 514,906 merges, and
// decoding each through encoding/json took about half of loading it.
type hfMerges []mergePair

type mergePair struct{ a, b string }

// UnmarshalJSON decodes the array. encoding/json has checked that data is
// valid JSON before it calls this, so the scan only follows its structure.
func (m *hfMerges) UnmarshalJSON(data []byte) error {
	s := jsonScan{data: data}
	s.space()
	if strings.HasPrefix(string(s.data[s.i:]), "null") {
		*m = nil
		return nil
	}
	if !s.consume('[') {
		return errors.New("merges is not an array")
	}
	out := make(hfMerges, 0, strings.Count(string(data), ",")/2+1)
	if s.consume(']') {
		*m = out
		return nil
	}
	for n := 0; ; n++ {
		var p mergePair
		switch s.peek() {
		case '"':
			str, err := s.str()
			if err != nil {
				return fmt.Errorf("merge %d: %w", n, err)
			}
			a, b, ok := strings.Cut(str, " ")
			if !ok || strings.Contains(b, " ") {
				return fmt.Errorf("merge %d: merge %q is not two tokens", n, str)
			}
			p = mergePair{a, b}
		case '[':
			s.consume('[')
			var parts []string
			for !s.consume(']') {
				if len(parts) > 0 && !s.consume(',') {
					return fmt.Errorf("merge %d: malformed pair", n)
				}
				if s.peek() != '"' {
					return fmt.Errorf("merge %d: a pair of non-strings", n)
				}
				str, err := s.str()
				if err != nil {
					return fmt.Errorf("merge %d: %w", n, err)
				}
				parts = append(parts, str)
			}
			if len(parts) != 2 {
				return fmt.Errorf("merge %d: merge has %d tokens, not 2", n, len(parts))
			}
			p = mergePair{parts[0], parts[1]}
		default:
			return fmt.Errorf("merge %d: merge is neither a string nor a pair", n)
		}
		out = append(out, p)
		if s.consume(',') {
			continue
		}
		if s.consume(']') {
			break
		}
		return fmt.Errorf("merge %d: malformed merges array", n)
	}
	*m = out
	return nil
}

// jsonScan walks valid JSON.
type jsonScan struct {
	data []byte
	i    int
}

func (s *jsonScan) space() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t' || s.data[s.i] == '\n' || s.data[s.i] == '\r') {
		s.i++
	}
}

func (s *jsonScan) peek() byte {
	s.space()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *jsonScan) consume(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// str reads the string at s.i; an escape or invalid UTF-8 (which
// encoding/json turns into U+FFFD) sends it through encoding/json.
func (s *jsonScan) str() (string, error) {
	start := s.i // the opening quote
	escaped := false
	for s.i++; s.i < len(s.data); s.i++ {
		switch s.data[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			if raw := s.data[start+1 : s.i-1]; !escaped && utf8.Valid(raw) {
				return string(raw), nil
			}
			var out string
			if err := json.Unmarshal(s.data[start:s.i], &out); err != nil {
				return "", err
			}
			return out, nil
		}
	}
	return "", errors.New("unterminated string")
}
