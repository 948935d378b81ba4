package adminapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/custody-gateway/custody"
)

// receipt serves a tenant its own receipt; another tenant's is "not
// found", so its existence is not revealed.
func (a *API) receipt(c *call) error {
	w, r, t, e := c.w, c.r, c.tenant, a
	id := r.PathValue("request_id")
	notFound := custody.Errorf(custody.CodeNotFound, "no receipt for request %s", id)
	rec, err := e.cfg.Recorder.Lookup(r.Context(), id)
	switch {
	case errors.Is(err, custody.ErrNotFound) && r.Header.Get(forwardedHeader) == "":
		// Not indexed yet, perhaps because another replica recorded it a
		// moment ago: ask the others.
		return e.remoteReceipt(w, r, id, "")
	case err != nil && !errors.Is(err, custody.ErrNotFound):
		// Not "not found": the index cannot say, and the newest leaves of
		// this replica's log (Lookup searched them) do not hold it.
		return indexDown(err)
	case err != nil || rec.Tenant != t.ID:
		return notFound
	case rec.Shard != e.cfg.Log.Origin():
		return e.remoteReceipt(w, r, id, rec.Shard)
	case rec.LeafIndex < 0:
		return notFound
	}
	rcpt, err := e.cfg.Log.Receipt(r.Context(), uint64(rec.LeafIndex), id)
	if err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the receipt could not be read from the log")
	}
	b, err := rcpt.Marshal()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(b)
	return err
}

// forwardedHeader marks a receipt request one replica makes of another,
// so that it is never forwarded again.
const forwardedHeader = "Custody-Forwarded"

// remoteReceipt fetches a receipt from the replica whose log shard holds
// it (shard), or, when the record is not indexed yet, from whichever
// other replica has it, with the caller's own credentials: only the
// recording replica has the keys that derive the salts, so the salts
// never have to be stored anywhere.
func (e *API) remoteReceipt(w http.ResponseWriter, r *http.Request, id, shard string) error {
	if r.Header.Get(forwardedHeader) != "" {
		return custody.Errorf(custody.CodeLedgerUnavailable, "the shard registry is inconsistent for log %s", shard)
	}
	shards, err := e.cfg.Index.Shards(r.Context())
	if err != nil {
		return custody.Wrap(custody.CodeLedgerUnavailable, err, "the shard list could not be read")
	}
	var lastErr error = custody.Errorf(custody.CodeNotFound, "no receipt for request %s", id)
	for _, s := range shards {
		if s.Origin == e.cfg.Log.Origin() || (shard != "" && s.Origin != shard) || s.URL == "" {
			continue
		}
		status, body, err := e.fetchReceipt(r, strings.TrimRight(s.URL, "/"), id)
		if err != nil {
			lastErr = custody.Wrap(custody.CodeLedgerUnavailable, err, "the replica holding log "+s.Origin+" is unreachable; retry later")
			continue
		}
		if status == http.StatusNotFound && shard == "" {
			continue
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_, err = w.Write(body)
		return err
	}
	return lastErr
}

func (e *API) fetchReceipt(r *http.Request, base, id string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+strings.TrimSuffix(PathReceipt, "{request_id}")+url.PathEscape(id), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	req.Header.Set(forwardedHeader, "1")
	resp, err := e.client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

func (e *API) client() *http.Client {
	if e.cfg.HTTP != nil {
		return e.cfg.HTTP
	}
	return http.DefaultClient
}
