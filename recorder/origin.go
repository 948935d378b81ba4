package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/verify"
)

// ErrOriginTaken is why a replica refuses to start when another live
// replica already records under its log origin with another key: their
// receipts would name one shard that two different logs claim to be.
var ErrOriginTaken = errors.New("ledger origin already in use by another replica")

// originProbeTimeout bounds the question "is the replica registered under
// this origin running?".
const originProbeTimeout = 3 * time.Second

// checkOrigin refuses origin if the index lists it with a verifier key
// other than vkey and the replica at the registered URL is running and
// publishes that other key. A registration whose replica does not answer
// is stale (a replica rebuilt with a new key, say): it is taken over, with
// a warning.
func checkOrigin(ctx context.Context, idx index.Index, origin, vkey string, logger *slog.Logger) error {
	shards, err := idx.Shards(ctx)
	if err != nil {
		return err
	}
	for _, s := range shards {
		if s.Origin != origin || s.VerifierKey == "" || s.VerifierKey == vkey {
			continue
		}
		live, err := publishedKey(ctx, s.URL)
		if err != nil {
			logger.Warn("ledger.origin was registered in the index with another key by a replica that does not answer: taking it over",
				"origin", origin, "url", s.URL, "err", err)
			continue
		}
		if live == vkey {
			continue // the registration is stale, the replica there is us
		}
		return fmt.Errorf("%w: ledger.origin %q is registered in the index by the replica at %s, which is running with another signing key (%s): "+
			"two replicas share one origin, as a copied config does. Give this replica its own ledger.origin (and ledger.public_url), or stop the other one",
			ErrOriginTaken, origin, s.URL, live)
	}
	return nil
}

// publishedKey fetches the verifier key the log at base publishes.
func publishedKey(ctx context.Context, base string) (string, error) {
	if base == "" {
		return "", errors.New("no URL registered")
	}
	ctx, cancel := context.WithTimeout(ctx, originProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/log/"+verify.VerifierFile, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", req.URL, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
