package console

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/custody-gateway/custody/adminapi"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/custody-gateway/custody"
)

type recordData struct {
	ID      string
	Found   bool
	Error   string
	Rec     *adminapi.Record
	Codes   []custody.Code
	InLog   string
	Receipt bool // the receipt can be fetched from this replica's log
}

// lookup reads one record and this replica's log status from the API.
func (c *Console) lookup(r *http.Request, id string) (*adminapi.Record, *adminapi.LogStatus, error) {
	var recs adminapi.RecordList
	if err := c.call(r.Context(), adminapi.PathRecords, url.Values{"request_id": {id}, "limit": {"1"}}, &recs); err != nil {
		return nil, nil, err
	}
	if len(recs.Data) == 0 {
		return nil, nil, nil
	}
	var lg adminapi.LogStatus
	if err := c.call(r.Context(), adminapi.PathLogStatus, nil, &lg); err != nil {
		return nil, nil, err
	}
	return &recs.Data[0], &lg, nil
}

func (c *Console) record(w http.ResponseWriter, r *http.Request) error {
	d := recordData{ID: strings.TrimSpace(r.URL.Query().Get("id"))}
	if d.ID == "" {
		return c.render(w, r, http.StatusOK, "record", d)
	}
	rec, lg, err := c.lookup(r, d.ID)
	switch {
	case err != nil:
		return fmt.Errorf("reading record: %w", err)
	case rec == nil:
		d.Error = "No record of that request id."
		return c.render(w, r, http.StatusNotFound, "record", d)
	}
	d.Found, d.Rec, d.Codes = true, rec, rec.Codes()
	d.InLog, d.Receipt = inLog(rec, lg)
	d.Receipt = d.Receipt && c.cfg.VerifyReceipt != nil && c.cfg.Log != nil
	return c.render(w, r, http.StatusOK, "record", d)
}

// inLog says where a record's leaf is, and whether this replica can hand
// out its receipt.
func inLog(rec *adminapi.Record, lg *adminapi.LogStatus) (string, bool) {
	switch {
	case rec.LeafIndex < 0:
		return "not sequenced in the log yet", false
	case rec.Shard != lg.Origin:
		return fmt.Sprintf("leaf %d of shard %s (another replica's log)", rec.LeafIndex, rec.Shard), false
	case uint64(rec.LeafIndex) < lg.Size:
		return fmt.Sprintf("integrated: leaf %d of shard %s (log size %d)", rec.LeafIndex, rec.Shard, lg.Size), true
	}
	return fmt.Sprintf("sequenced as leaf %d of shard %s, awaiting integration (log size %d)", rec.LeafIndex, rec.Shard, lg.Size), true
}

type receiptData struct {
	Receipt string
	Error   string
	Report  *Report
}

// receiptForm shows the checker, filled with a record's receipt when
// ?id= names one in this replica's log.
func (c *Console) receiptForm(w http.ResponseWriter, r *http.Request) error {
	if c.cfg.VerifyReceipt == nil {
		return &httpError{status: http.StatusNotFound, msg: "receipt checking is not configured"}
	}
	var d receiptData
	if id := strings.TrimSpace(r.URL.Query().Get("id")); id != "" {
		b, err := c.receiptOf(r, id)
		if err != nil {
			d.Error = err.Error()
		}
		d.Receipt = string(b)
	}
	return c.render(w, r, http.StatusOK, "receipt", d)
}

// receiptOf reads a record's receipt from this replica's log: the one
// thing the console reads outside the admin API, since the API hands a
// receipt (with its salts) only to the tenant who sent the request.
func (c *Console) receiptOf(r *http.Request, id string) ([]byte, error) {
	rec, lg, err := c.lookup(r, id)
	if err != nil || rec == nil {
		return nil, errors.New("no record of that request id")
	}
	if _, ok := inLog(rec, lg); !ok || c.cfg.Log == nil {
		return nil, errors.New("that request's leaf is not in this replica's log")
	}
	rc, err := c.cfg.Log.Receipt(r.Context(), uint64(rec.LeafIndex), id)
	if err != nil {
		c.log.Error("console: reading a receipt", "id", id, "err", err)
		return nil, errors.New("the receipt could not be read from the log")
	}
	return rc.Marshal()
}

// receiptCheck verifies an uploaded receipt. The form is read part by
// part into memory, bounded: request and response bytes are plaintext
// and must not be spooled to disk as ParseMultipartForm would.
func (c *Console) receiptCheck(w http.ResponseWriter, r *http.Request) error {
	if c.cfg.VerifyReceipt == nil {
		return &httpError{status: http.StatusNotFound, msg: "receipt checking is not configured"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, c.cfg.MaxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		return &httpError{status: http.StatusBadRequest, msg: "expected a multipart form"}
	}
	fields := map[string][]byte{}
	for first := true; ; first = false {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &httpError{status: http.StatusBadRequest, msg: "the form could not be read (too large?)"}
		}
		name := p.FormName()
		b, err := io.ReadAll(p)
		if err != nil {
			return &httpError{status: http.StatusBadRequest, msg: "the form could not be read (too large?)"}
		}
		if first {
			if name != "csrf" {
				return &httpError{status: http.StatusForbidden, msg: "the form carries no CSRF token"}
			}
			if err := c.checkToken(r, string(b)); err != nil {
				return err
			}
			continue
		}
		switch name {
		case "receipt", "receipt_file", "request", "response":
			if p.FileName() != "" || name == "receipt" {
				fields[name] = b
			}
		}
	}
	d := receiptData{Receipt: string(fields["receipt"])}
	rcpt := bytes.TrimSpace(fields["receipt"])
	if len(rcpt) == 0 {
		rcpt = fields["receipt_file"]
		d.Receipt = string(rcpt)
	}
	if len(rcpt) == 0 {
		d.Error = "Paste a receipt or choose its file."
		return c.render(w, r, http.StatusBadRequest, "receipt", d)
	}
	rep, err := c.cfg.VerifyReceipt(r.Context(), rcpt, fields["request"], fields["response"])
	if err != nil {
		d.Error = err.Error()
		return c.render(w, r, http.StatusUnprocessableEntity, "receipt", d)
	}
	d.Report = rep
	return c.render(w, r, http.StatusOK, "receipt", d)
}
