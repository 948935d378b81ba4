package gateway

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/custody-gateway/custody/internal/inproc"
)

// logStatus answers GET /v1/custody/log: this replica's log, its size, the
// leaves no published checkpoint covers yet, its latest checkpoint with
// the names that signed it (the log's own key, then any witnesses'
// cosignatures), and with ledger.witnesses the witness quorum's state.
func (e *Evidence) logStatus(g *Gateway, w http.ResponseWriter, r *http.Request) error {
	if err := g.adminAuth(r); err != nil {
		return err
	}
	out := map[string]any{"object": "log", "origin": e.Log.Origin(), "size": e.Log.Size(), "checkpoint": nil,
		"unpublished": e.Log.Unpublished(r.Context()), "witnesses": nil}
	status, body, err := inproc.Get(r.Context(), e.Log.Handler(), "/log/checkpoint")
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		if cp, ok := parseCheckpoint(body, e.Log.Origin()); ok {
			now := g.now()
			seen := e.logState.observe(body, now)
			cp["seen_at"], cp["age_ms"] = seen.UTC(), ms(now.Sub(seen))
			out["checkpoint"] = cp
		}
	}
	if q := e.Log.WitnessQuorum(); q > 0 {
		out["witnesses"] = e.witnessQuorum(r.Context(), q, status == http.StatusOK && e.Log.Cosigned(body))
	}
	return writeJSON(w, out)
}

// parseCheckpoint reads a signed-note checkpoint: origin, size, root hash,
// a blank line, then "— name signature" lines. Signatures by another name
// than origin are cosignatures.
func parseCheckpoint(b []byte, origin string) (map[string]any, bool) {
	body, sigs, ok := strings.Cut(string(b), "\n\n")
	lines := strings.Split(body, "\n")
	if !ok || len(lines) < 3 {
		return nil, false
	}
	var size uint64
	for _, c := range lines[1] {
		if c < '0' || c > '9' {
			return nil, false
		}
		size = size*10 + uint64(c-'0')
	}
	signers, cosigners := []string{}, []string{}
	for _, l := range strings.Split(sigs, "\n") {
		rest, ok := strings.CutPrefix(l, "— ")
		name, sig, _ := strings.Cut(rest, " ")
		if !ok || name == "" || sig == "" {
			continue // not a signature line
		}
		signers = append(signers, name)
		if name != origin {
			cosigners = append(cosigners, name)
		}
	}
	return map[string]any{"origin": lines[0], "size": size, "root_hash": lines[2], "signers": signers, "cosignatures": cosigners}, true
}

// checkpointSeen remembers when this replica first saw the log's current
// checkpoint: a checkpoint carries no time, and the age of the last one is
// what tells an operator that the log has stopped integrating.
type checkpointSeen struct {
	mu   sync.Mutex
	text []byte
	at   time.Time
}

func (c *checkpointSeen) observe(text []byte, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(text, c.text) {
		c.text, c.at = bytes.Clone(text), now
	}
	return c.at
}

// witnessQuorumJSON is the witnesses' part of GET /v1/custody/log.
type witnessQuorumJSON struct {
	Quorum    int  `json:"quorum"`     // cosignatures a checkpoint needs before it is published
	QuorumMet bool `json:"quorum_met"` // enough witnesses answer for the next checkpoint
	// Reason is why the quorum is not met, as /readyz says it; "" when met.
	Reason string `json:"reason"`
	// Cosigned: the latest published checkpoint carries the quorum's valid
	// cosignatures.
	Cosigned  bool          `json:"cosigned"`
	Witnesses []witnessJSON `json:"witnesses"`
}

type witnessJSON struct {
	Name         string     `json:"name"`
	Up           bool       `json:"up"`            // its last answer was a cosignature or a conflict it resolves
	LastError    string     `json:"last_error"`    // why it is not up; ""  while up or before it was asked
	LastAnswer   *time.Time `json:"last_answer"`   // null: it never answered
	LastCosigned *time.Time `json:"last_cosigned"` // null: it never cosigned
}

func (e *Evidence) witnessQuorum(ctx context.Context, quorum int, cosigned bool) *witnessQuorumJSON {
	out := &witnessQuorumJSON{Quorum: quorum, QuorumMet: true, Cosigned: cosigned, Witnesses: []witnessJSON{}}
	if err := e.Log.WitnessStatus(ctx); err != nil {
		out.QuorumMet, out.Reason = false, err.Error()
	}
	for _, s := range e.Log.Witnesses() {
		out.Witnesses = append(out.Witnesses, witnessJSON{Name: s.Name, Up: s.Up, LastError: s.LastError,
			LastAnswer: timeOrNil(s.LastAnswer), LastCosigned: timeOrNil(s.LastCosigned)})
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
