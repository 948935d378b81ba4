package adminapi

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/custody-gateway/custody/internal/inproc"
)

// logStatus answers GET /v1/custody/log: this replica's log, its size, the
// leaves no published checkpoint covers yet, its latest checkpoint with
// the names that signed it (the log's own key, then any witnesses'
// cosignatures), and with ledger.witnesses the witness quorum's state.
func (a *API) logStatus(c *call) error {
	l := a.cfg.Log
	ctx := c.r.Context()
	out := LogStatus{Object: "log", Origin: l.Origin(), Size: l.Size(), Unpublished: l.Unpublished(ctx)}
	status, body, err := inproc.Get(ctx, l.Handler(), "/log/checkpoint")
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		if cp, ok := parseCheckpoint(body, l.Origin()); ok {
			now := a.cfg.Now()
			seen := a.logState.observe(body, now)
			cp.SeenAt, cp.AgeMS = seen.UTC(), ms(now.Sub(seen))
			out.Checkpoint = cp
		}
	}
	if q := l.WitnessQuorum(); q > 0 {
		wq := &WitnessQuorum{Quorum: q, QuorumMet: true, Cosigned: status == http.StatusOK && l.Cosigned(body), Witnesses: []Witness{}}
		if err := l.WitnessStatus(ctx); err != nil {
			wq.QuorumMet, wq.Reason = false, err.Error()
		}
		for _, s := range l.Witnesses() {
			wq.Witnesses = append(wq.Witnesses, Witness{Name: s.Name, Up: s.Up, LastError: s.LastError,
				LastAnswer: timeOrNil(s.LastAnswer), LastCosigned: timeOrNil(s.LastCosigned)})
		}
		out.Witnesses = wq
	}
	return c.json(out)
}

// logTiles serves the log's public tiles and checkpoint.
func (a *API) logTiles(c *call) error {
	a.cfg.Log.Handler().ServeHTTP(c.w, c.r)
	return nil
}

// parseCheckpoint reads a signed-note checkpoint: origin, size, root hash,
// a blank line, then "— name signature" lines. Signatures by another name
// than origin are cosignatures.
func parseCheckpoint(b []byte, origin string) (*Checkpoint, bool) {
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
	cp := &Checkpoint{Origin: lines[0], Size: size, RootHash: lines[2], Signers: []string{}, Cosignatures: []string{}}
	for _, l := range strings.Split(sigs, "\n") {
		rest, ok := strings.CutPrefix(l, "— ")
		name, sig, _ := strings.Cut(rest, " ")
		if !ok || name == "" || sig == "" {
			continue // not a signature line
		}
		cp.Signers = append(cp.Signers, name)
		if name != origin {
			cp.Cosignatures = append(cp.Cosignatures, name)
		}
	}
	return cp, true
}

func (c *checkpointSeen) observe(text []byte, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !bytes.Equal(text, c.text) {
		c.text, c.at = bytes.Clone(text), now
	}
	return c.at
}
