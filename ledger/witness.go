package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/custody-gateway/custody/verify"
	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/tessera"
	"golang.org/x/mod/sumdb/note"
)

// cosigned reports whether the signed checkpoint cp carries the quorum's
// valid cosignatures.
func (w *witnessing) cosigned(cp []byte, logKey note.Verifier) bool {
	names, err := verify.Cosigners(cp, logKey, w.keys)
	return err == nil && len(names) >= w.quorum
}

// Witness is one C2SP tlog-witness the log asks to cosign each checkpoint
// before publishing it (ledger.witnesses).
type Witness struct {
	// Name is the witness's name (its cosignature lines' key name).
	Name string
	// VKey is its cosignature/v1 verifier key, "name+hash+base64".
	VKey string
	// URL is where it serves POST <URL>/add-checkpoint.
	URL string
}

// DefaultWitnessTimeout bounds one round of asking the witnesses.
const DefaultWitnessTimeout = 5 * time.Second

// witnessing is the ledger's view of its witnesses: tessera asks them
// (through client, whose transport records each answer) each time it
// publishes a checkpoint, and publishes only once Quorum have cosigned.
// Nothing on the request path waits for them: the journal is the
// durability point, and a receipt says whether its checkpoint is cosigned.
type witnessing struct {
	witnesses []Witness
	quorum    int
	byURL     map[string]int // add-checkpoint URL -> index in witnesses
	keys      []note.Verifier
	client    *http.Client

	mu    sync.Mutex // guards state
	state []WitnessState
}

// WitnessState is what the ledger last heard from a witness.
type WitnessState struct {
	Name string
	URL  string
	// Up is true when its last answer was a cosignature or a conflict it
	// resolves (409, the size it knows): it is taking part.
	Up bool
	// LastError is why it is not up ("" while up or before any request).
	LastError string
	// LastAnswer is when it last answered at all; LastCosigned when it
	// last returned a cosignature.
	LastAnswer, LastCosigned time.Time
}

func newWitnessing(ws []Witness, quorum int, timeout time.Duration) (*witnessing, tessera.WitnessGroup, *tessera.WitnessOptions, error) {
	if quorum <= 0 || quorum > len(ws) {
		return nil, tessera.WitnessGroup{}, nil, fmt.Errorf("witness quorum %d: want 1 to %d (the number of witnesses)", quorum, len(ws))
	}
	if timeout <= 0 {
		timeout = DefaultWitnessTimeout
	}
	w := &witnessing{witnesses: ws, quorum: quorum, byURL: map[string]int{}, state: make([]WitnessState, len(ws))}
	// The group is built from tessera's witness policy format (Sigsum's,
	// with cosignature/v1 keys): one "witness" line each, a group of
	// quorum of them, and that group as the quorum.
	var policy strings.Builder
	var names []string
	for i, x := range ws {
		u, err := url.Parse(x.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || strings.ContainsAny(x.URL, " \t\n#") {
			return nil, tessera.WitnessGroup{}, nil, fmt.Errorf("witness %s: URL %q is not http(s)", x.Name, x.URL)
		}
		tw, err := tessera.NewWitness(x.VKey, u)
		if err != nil {
			return nil, tessera.WitnessGroup{}, nil, fmt.Errorf("witness %s: verifier key: %w", x.Name, err)
		}
		if tw.Key.Name() != x.Name {
			return nil, tessera.WitnessGroup{}, nil, fmt.Errorf("witness %s: its key is named %q", x.Name, tw.Key.Name())
		}
		w.byURL[tw.URL] = i
		w.keys = append(w.keys, tw.Key)
		w.state[i] = WitnessState{Name: x.Name, URL: x.URL}
		name := fmt.Sprintf("w%d", i)
		names = append(names, name)
		fmt.Fprintf(&policy, "witness %s %s %s\n", name, x.VKey, x.URL)
	}
	fmt.Fprintf(&policy, "group custody %d %s\nquorum custody\n", quorum, strings.Join(names, " "))
	group, err := tessera.NewWitnessGroupFromPolicy([]byte(policy.String()))
	if err != nil {
		return nil, tessera.WitnessGroup{}, nil, fmt.Errorf("witness policy: %w", err)
	}
	w.client = &http.Client{Transport: &witnessTransport{w: w, base: http.DefaultTransport}, Timeout: timeout}
	return w, group, &tessera.WitnessOptions{Timeout: timeout}, nil
}

// witnessTransport records every witness's answers.
type witnessTransport struct {
	w    *witnessing
	base http.RoundTripper
}

func (t *witnessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	t.w.record(req.URL.String(), resp, err)
	return resp, err
}

func (w *witnessing) record(u string, resp *http.Response, err error) {
	i, ok := w.byURL[u]
	if !ok || errors.Is(err, context.Canceled) {
		return // tessera stops asking once the quorum has cosigned
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.state[i]
	now := time.Now()
	switch {
	case err != nil:
		s.Up, s.LastError = false, shortError(err)
	case resp.StatusCode == http.StatusOK:
		s.Up, s.LastError, s.LastAnswer, s.LastCosigned = true, "", now, now
	case resp.StatusCode == http.StatusConflict:
		s.Up, s.LastError, s.LastAnswer = true, "", now
	default:
		s.Up, s.LastError, s.LastAnswer = false, "answered "+resp.Status, now
	}
}

func shortError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.Contains(s, "dial tcp") {
		return "unreachable (" + s[i+2:] + ")"
	}
	return s
}

// Witnesses reports the configured witnesses' states (nil without
// witnesses).
func (l *Log) Witnesses() []WitnessState {
	if l.wit == nil {
		return nil
	}
	l.wit.mu.Lock()
	defer l.wit.mu.Unlock()
	return append([]WitnessState(nil), l.wit.state...)
}

// WitnessStatus is a summary for /readyz: nil when no witnesses are
// configured or the quorum answers, else why checkpoints are not being
// published. Appends go on regardless: the leaves are durable and in the
// tree, only their cosigned checkpoint waits.
func (l *Log) WitnessStatus(ctx context.Context) error {
	if l.wit == nil {
		return nil
	}
	up := 0
	var down []string
	for _, s := range l.Witnesses() {
		if s.Up || s.LastError == "" {
			up++
			continue
		}
		down = append(down, s.Name+": "+s.LastError)
	}
	if up >= l.wit.quorum {
		return nil
	}
	published := "none"
	if raw, err := l.reader.ReadCheckpoint(ctx); err == nil {
		if cp, _, _, err := log.ParseCheckpoint(raw, l.origin, l.keys.verifier); err == nil {
			published = fmt.Sprint(cp.Size)
		}
	}
	return fmt.Errorf("witness quorum not met: %d of %d witnesses answer, %d needed; no new checkpoint is published "+
		"(the last covers %s leaves, the log holds %d; requests are still served and recorded) (%s)",
		up, len(l.wit.witnesses), l.wit.quorum, published, l.integrated.Load(), strings.Join(down, "; "))
}

// Unpublished is how many leaves of the log no published checkpoint
// covers yet.
func (l *Log) Unpublished(ctx context.Context) uint64 {
	size := l.integrated.Load()
	raw, err := l.reader.ReadCheckpoint(ctx)
	if err != nil {
		return size
	}
	cp, _, _, err := log.ParseCheckpoint(raw, l.origin, l.keys.verifier)
	if err != nil || cp.Size > size {
		return size
	}
	return size - cp.Size
}

// WitnessQuorum is how many witnesses must cosign a checkpoint before it
// is published (ledger.witness_policy.quorum); 0 without witnesses.
func (l *Log) WitnessQuorum() int {
	if l.wit == nil {
		return 0
	}
	return l.wit.quorum
}

// Cosigned reports whether the signed checkpoint cp carries the witness
// quorum's valid cosignatures, as a receipt's cosigned says; false
// without witnesses.
func (l *Log) Cosigned(cp []byte) bool {
	return l.wit != nil && l.wit.cosigned(cp, l.keys.verifier)
}
