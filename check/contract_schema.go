package check

import (
	"crypto/sha256"
	"sync"

	"github.com/custody-gateway/custody/internal/jsonschema"
)

// Schemas compiles the schemas clients wrote (tool parameters, response
// formats) and keeps them: a client sends the same tools with every
// request of a conversation, and compiling one costs far more than
// checking an answer with it. Safe for concurrent use; the zero value is
// ready. A nil *Schemas compiles every time.
type Schemas struct {
	mu        sync.Mutex
	m         map[[32]byte]compiled // guarded by mu
	toolLists map[[32]byte][]Tool   // guarded by mu; read-only once stored
}

type compiled struct {
	s   *jsonschema.Schema
	err error
}

// maxSchemas bounds the memory of the kept schemas: past it, the store
// starts again empty (the schemas in use are compiled again at once).
const maxSchemas = 1024

// Compile is the schema raw compiles to (leniently: a client's schema is
// JSON Schema as written); an error when it does not compile, and then
// no clause is held to it.
func (s *Schemas) Compile(raw []byte) (*jsonschema.Schema, error) {
	if s == nil {
		return jsonschema.ParseLenient(raw)
	}
	key := sha256.Sum256(raw)
	s.mu.Lock()
	c, ok := s.m[key]
	s.mu.Unlock()
	if ok {
		return c.s, c.err
	}
	c.s, c.err = jsonschema.ParseLenient(raw)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= maxSchemas {
		s.m = make(map[[32]byte]compiled)
	}
	s.m[key] = c
	s.mu.Unlock()
	return c.s, c.err
}

// tools is the tools member raw, read (parseTools) once per distinct
// member: a client declares the same tools with each request.
func (s *Schemas) tools(raw []byte) []Tool {
	if s == nil {
		return parseTools(raw)
	}
	key := sha256.Sum256(raw)
	s.mu.Lock()
	t, ok := s.toolLists[key]
	s.mu.Unlock()
	if ok {
		return t
	}
	t = parseTools(raw)
	s.mu.Lock()
	if s.toolLists == nil || len(s.toolLists) >= maxSchemas {
		s.toolLists = make(map[[32]byte][]Tool)
	}
	s.toolLists[key] = t
	s.mu.Unlock()
	return t
}
