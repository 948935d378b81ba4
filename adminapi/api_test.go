package adminapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/gateway"
	"github.com/custody-gateway/custody/index"
	"github.com/custody-gateway/custody/index/sqlite"
	"github.com/custody-gateway/custody/internal/inproc"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/custody-gateway/custody/recorder"
)

// serve runs a gateway for cfg with an API of acfg mounted beside it, as
// serve mounts it, and returns its server.
func serve(t *testing.T, cfg *config.Config, rec *recorder.Recorder, acfg Config, logger *slog.Logger) (*httptest.Server, *API) {
	t.Helper()
	api := New(acfg)
	gw, err := gateway.New(gateway.Options{Config: cfg, Recorder: rec, Logger: logger, Mounts: api.Mounts()})
	if err != nil {
		t.Fatal(err)
	}
	api.Bind(gw)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv, api
}

// newAPI is a gateway and its API on a real ledger and sqlite index.
func newAPI(t *testing.T) (*httptest.Server, *API) {
	t.Helper()
	idx, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return serveIndex(t, idx)
}

// serveIndex is a gateway and its API on a real ledger and the index idx
// (its caller closes idx), for one tenant, acme, and one admin key.
func serveIndex(t *testing.T, idx index.Index) (*httptest.Server, *API) {
	t.Helper()
	ctx := context.Background()
	l, err := ledgertest.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(ctx) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec, err := recorder.New(ctx, recorder.Config{Log: l, Index: idx, TenantIDs: []string{"acme"}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	cfg, err := config.Parse("t.yaml", []byte("admin_keys: [adm-test]\ntenants: [{id: acme, api_keys: [sk-acme]}]\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, cfg, rec, Config{Config: cfg, Recorder: rec, Index: idx, Log: l}, logger)
}

func do(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func errCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Type == "" || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	return e.Error.Code
}

// TestOpenAPIMatchesTheTable: openapi.json documents exactly the
// endpoints of the table that say Documented, each with its method, and
// an endpoint that asks for a key documents its error answers.
func TestOpenAPIMatchesTheTable(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var inDoc, inTable []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m != "parameters" && m != "summary" && m != "description" {
				inDoc = append(inDoc, strings.ToUpper(m)+" "+p)
			}
		}
	}
	for _, e := range Endpoints() {
		if !e.Documented {
			continue
		}
		inTable = append(inTable, e.Method+" "+e.Path)
		op := doc.Paths[e.Path][strings.ToLower(e.Method)]
		if e.Auth != AuthNone && op.Responses["default"] == nil && op.Responses["401"] == nil {
			t.Errorf("%s %s asks for a key but documents no error answer", e.Method, e.Path)
		}
	}
	slices.Sort(inDoc)
	slices.Sort(inTable)
	if !slices.Equal(inDoc, inTable) {
		t.Errorf("openapi.json documents\n%v\nthe table has\n%v", inDoc, inTable)
	}
}

// TestAuthFollowsTheTable: every endpoint answers as its Auth says, with
// the gateway's keys and error shape: an admin endpoint refuses no key
// (401) and a tenant's key (403); a tenant endpoint refuses no key; a
// public one needs none. A wrong method is a 405 naming the right one.
func TestAuthFollowsTheTable(t *testing.T) {
	srv, _ := newAPI(t)
	for _, e := range Endpoints() {
		path := strings.Replace(e.Path, "{request_id}", "req-none", 1)
		if strings.HasSuffix(path, "/") {
			path += "checkpoint"
		}
		code, body := do(t, srv, e.Method, path, "", "")
		switch e.Auth {
		case AuthAdmin:
			if code != 401 || errCode(t, body) != "unauthorized" {
				t.Errorf("%s %s without a key: %d %s", e.Method, path, code, body)
			}
			if code, body := do(t, srv, e.Method, path, "sk-acme", ""); code != 403 {
				t.Errorf("%s %s with a tenant's key: %d %s", e.Method, path, code, body)
			}
		case AuthTenant:
			if code != 401 {
				t.Errorf("%s %s without a key: %d %s", e.Method, path, code, body)
			}
		case AuthNone:
			if code != 200 {
				t.Errorf("%s %s is public, yet: %d %s", e.Method, path, code, body)
			}
		}
		other := "POST"
		if e.Method == "POST" {
			other = "GET"
		}
		code, body = do(t, srv, other, path, "adm-test", "")
		if code != 405 || errCode(t, body) != "method_not_allowed" {
			t.Errorf("%s %s: %d %s, want 405 method_not_allowed", other, path, code, body)
		}
	}
}

// TestInProcessServesWhatTheConsoleReads: the in-process handler answers
// the endpoints marked InProcess without a key, and nothing else (the
// POST actions and the tenants' receipts are not the console's).
func TestInProcessServesWhatTheConsoleReads(t *testing.T) {
	_, api := newAPI(t)
	h := api.InProcess()
	n := 0
	for _, e := range Endpoints() {
		path := strings.Replace(e.Path, "{request_id}", "req-none", 1)
		if e.Path == PathBreakdown {
			path += "?by=code"
		}
		var code int
		if e.Method == "GET" {
			var err error
			if code, _, err = inproc.Get(context.Background(), h, path); err != nil {
				t.Fatal(err)
			}
		} else {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(e.Method, path, strings.NewReader("{}")))
			code = w.Code
		}
		switch {
		case e.InProcess && code != 200:
			t.Errorf("in process, %s %s: %d, want 200 without a key", e.Method, path, code)
		case !e.InProcess && code != 404 && code != 405:
			t.Errorf("in process, %s %s: %d, want it not served", e.Method, path, code)
		}
		if e.InProcess {
			n++
		}
	}
	if n < 7 {
		t.Errorf("only %d endpoints are the console's", n)
	}
}
