package sim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-gateway/custody/template"
	"github.com/custody-gateway/custody/tokenize"
)

// Server is the simulator; it implements http.Handler.
type Server struct {
	cfg    Config
	faults faultSet // Config.Faults, read-only after New
	served map[string]bool
	// chatPlaceholder is usage.prompt_tokens of a chat prompt replaced by
	// the one-token placeholder: 1 plus the framing of one user message.
	chatPlaceholder int
	counter         tokenize.Counter
	tmpl            *template.Template
	pool            *kvPool
	cache           *prefixCache
	mux             *http.ServeMux
	seq             atomic.Uint64 // request sequence numbers, the page owners
	faultSeq        atomic.Uint64 // requests counted for Config.FaultRate
	// samples counts the unseeded sampled requests by body digest, for
	// Config.SampleSeed.
	samplesMu sync.Mutex
	samples   map[[32]byte]uint64
	created   int64 // the `created` of GET /v1/models entries

	mu  sync.Mutex
	mem memory // what earlier requests left behind; guarded by mu
}

// memory is the state the replay-style faults draw on. Clean traffic
// writes it but never reads it.
type memory struct {
	lastBody   map[string][]byte // response kind -> last body (or SSE transcript)
	lastID     map[string]string // endpoint -> last response id
	lastStream streamHead        // the last stream's id and created
	lastReqID  string            // the last X-Request-Id received
}

type streamHead struct {
	id      string
	created int64
}

var _ http.Handler = (*Server)(nil)

// New returns a simulator for cfg (zero fields take their defaults).
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	counter := cfg.Counter
	if counter == nil {
		if counter, err = tokenize.Default(); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	tmpl := cfg.Template
	if tmpl == nil {
		if tmpl, err = template.Builtin(template.BuiltinChatML); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	s := &Server{
		tmpl:    tmpl,
		cfg:     cfg,
		faults:  faultSet{},
		served:  map[string]bool{},
		counter: counter,
		pool:    newKVPool(cfg.Pages, cfg.PageTokens, cfg.OwnershipTags),
		cache:   newPrefixCache(cfg.PageTokens, cfg.CacheBlocks),
		mux:     http.NewServeMux(),
		created: time.Now().Unix(),
		mem:     memory{lastBody: map[string][]byte{}, lastID: map[string]string{}},
	}
	for _, f := range cfg.Faults {
		s.faults[f] = true
	}
	empty, err := tmpl.Render(template.EngineLlamaCpp, []byte(`{"messages":[{"role":"user","content":""}]}`))
	if err != nil {
		return nil, fmt.Errorf("sim: rendering the placeholder: %w", err)
	}
	s.chatPlaceholder = counter.Count(empty.Text) + 1
	for _, m := range cfg.Models {
		s.served[m] = true
	}
	s.mux.HandleFunc("POST /v1/chat/completions", s.adapt(s.chat))
	s.mux.HandleFunc("POST /v1/completions", s.adapt(s.completions))
	s.mux.HandleFunc("POST /v1/embeddings", s.adapt(s.embeddings))
	s.mux.HandleFunc("GET /v1/models", s.adapt(s.models))
	s.handleDialects()
	s.mux.HandleFunc("/", s.adapt(s.notFound))
	return s, nil
}

// ServeHTTP serves the OpenAI-compatible endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// call is one request as the handlers see it.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	body   []byte
	faults faultSet
	owner  owner
}

// adapt turns a handler returning error into an http.HandlerFunc: it
// echoes X-Request-Id (or, under id-echo-mismatch, someone else's),
// resolves the request's faults, reads the body, and writes any error as
// OpenAI-shaped JSON.
func (s *Server) adapt(h func(*call) error) http.HandlerFunc {
	return s.adaptWith(h, writeError)
}

// adaptWith is adapt with the error writer of a dialect.
func (s *Server) adaptWith(h func(*call) error, writeError func(http.ResponseWriter, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{w: w, r: r, faults: s.faults}
		tenant := r.Header.Get("X-Tenant")
		if tenant == "" {
			tenant = "anonymous"
		}
		c.owner = owner{req: s.seq.Add(1), tenant: tenant}
		if rate := s.cfg.FaultRate; rate > 0 && rate < 1 {
			k := float64(s.faultSeq.Add(1))
			if math.Floor(k*rate) == math.Floor((k-1)*rate) {
				c.faults = faultSet{} // this one is served honestly
			}
		}
		var headerErr error
		if v := r.Header.Get("X-Sim-Fault"); v != "" && s.cfg.AllowFaultHeader {
			fs := faultSet{}
			for f := range c.faults {
				fs[f] = true
			}
			headerErr = parseFaultList(v, fs)
			c.faults = fs
		}
		if c.faults[FaultAmbiguousModel] {
			c.w = ambiguousWriter{w}
		}
		rid := r.Header.Get("X-Request-Id")
		s.mu.Lock()
		prev := s.mem.lastReqID
		if rid != "" {
			s.mem.lastReqID = rid
		}
		s.mu.Unlock()
		echo := rid
		if echo == "" {
			echo = "req-" + randomID(12)
		}
		if c.faults[FaultIDEchoMismatch] {
			echo = prev
			if echo == "" || echo == rid {
				echo = "req-" + randomID(12)
			}
		}
		w.Header().Set("X-Request-Id", echo)
		err := headerErr
		if err == nil {
			err = s.readBody(c)
		}
		if err == nil {
			err = h(c)
		}
		if err != nil {
			writeError(w, err)
		}
	}
}

func (s *Server) readBody(c *call) error {
	if c.r.Method != http.MethodPost {
		return nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.cfg.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
			msg: fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes)}
	}
	if err != nil {
		return badRequest("reading the request body failed")
	}
	c.body = body
	return nil
}

// apiError is an error with its HTTP status and OpenAI error fields.
type apiError struct {
	status         int
	typ, code, msg string
	param          string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

// writeError is the one place an error becomes a status and a body.
func writeError(w http.ResponseWriter, err error) {
	ae := asAPIError(err)
	d := errorDetail{Message: ae.msg, Type: ae.typ, Code: ae.code}
	if ae.param != "" {
		d.Param = strPtr(ae.param)
	}
	body, _ := json.Marshal(errorBody{Error: d})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(ae.status)
	_, _ = w.Write(body)
}

func asAPIError(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errBadRequest):
		return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "invalid_request", msg: err.Error()}
	case errors.Is(err, errKVForeignPage):
		return &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "kv_ownership_violation",
			msg: "decode read a KV page this request does not own; request failed closed"}
	case errors.Is(err, errKVExhausted):
		return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "kv_pool_exhausted",
			msg: "no free KV pages; retry later"}
	}
	return &apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal_error", msg: "internal error"}
}

func (s *Server) checkModel(model string) error {
	if s.served[model] {
		return nil
	}
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found", param: "model",
		msg: fmt.Sprintf("the model %q does not exist", model)}
}

// notFound answers unknown paths (404) and known paths with the wrong
// method (405) in OpenAI's error shape.
func (s *Server) notFound(c *call) error {
	switch c.r.URL.Path {
	case "/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models":
		return &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			msg: fmt.Sprintf("method %s is not allowed on this path", c.r.Method)}
	}
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "not_found", msg: "unknown path"}
}

func (s *Server) models(c *call) error {
	list := modelList{Object: "list"}
	for _, m := range s.cfg.Models {
		list.Data = append(list.Data, modelInfo{ID: m, Object: "model", Created: s.created, OwnedBy: "custody-sim", MaxModelLen: s.cfg.Capacity})
	}
	return writeJSON(c.w, list)
}

func writeJSON(w http.ResponseWriter, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding response: %w", err)
	}
	writeBody(w, body)
	return nil
}

func writeBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// randomID returns n random bytes, hex-encoded.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// unseeded is the sampling seed of a request that samples without a
// seed: random, or the next of Config.SampleSeed's stream for its body.
func (s *Server) unseeded(body []byte) uint64 {
	if s.cfg.SampleSeed == 0 {
		return randomU64()
	}
	d := sha256.Sum256(body)
	s.samplesMu.Lock()
	if s.samples == nil {
		s.samples = map[[32]byte]uint64{}
	}
	k := s.samples[d]
	s.samples[d] = k + 1
	s.samplesMu.Unlock()
	var b [48]byte
	binary.LittleEndian.PutUint64(b[:8], s.cfg.SampleSeed)
	copy(b[8:40], d[:])
	binary.LittleEndian.PutUint64(b[40:], k)
	h := sha256.Sum256(b[:])
	return binary.LittleEndian.Uint64(h[:8])
}

func randomU64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// fingerprint is the stable system_fingerprint of a model name and variant.
func fingerprint(model string, variant int) string {
	sum := sha256.Sum256([]byte(model + "\x00" + strconv.Itoa(variant)))
	return "fp_" + hex.EncodeToString(sum[:5])
}

// swapBody records body as the last of its kind and returns what the
// response-swap fault delivers instead: the previous body of that kind, or
// body itself when there is none.
func (s *Server) swapBody(kind string, body []byte, swap bool) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.mem.lastBody[kind]
	s.mem.lastBody[kind] = body
	if swap && prev != nil {
		return prev
	}
	return body
}

// responseID returns the id of a new response of endpoint: fresh, or under
// duplicate-id the previous response's id.
func (s *Server) responseID(endpoint, prefix string, dup bool) string {
	id := prefix + randomID(12)
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.mem.lastID[endpoint]; dup && prev != "" {
		return prev
	}
	s.mem.lastID[endpoint] = id
	return id
}

// otherStream returns another stream's head for stream-interleave, and
// records own as the last stream.
func (s *Server) otherStream(own streamHead) streamHead {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.mem.lastStream
	s.mem.lastStream = own
	if prev.id == "" || prev.id == own.id {
		prev = streamHead{id: own.id[:strings.LastIndexByte(own.id, '-')+1] + randomID(12), created: own.created - 7}
	}
	if prev.created == own.created {
		prev.created--
	}
	return prev
}
