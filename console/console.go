// Package console is custody's operator web page, served at /ui/ behind
// the admin key. The overview answers "is anything wrong right now?": per
// configured model and route, client traffic and canary probes apart,
// verdict rates, rejections by code, fallbacks, a quarantined route shown
// out of service with since-when and why, the log's checkpoint, and the
// latest rejected and flagged transactions. Beside it: breakdowns by
// tenant, code, route and model; the event timeline, paged and filtered;
// record lookup by request id; and a receipt checker.
//
// Everything is rendered on the server with html/template; charts are
// inline SVG drawn here; the stylesheet is embedded. The page makes no
// request outside the gateway and runs no script, and its
// Content-Security-Policy forbids both. It reads only the admin API (see
// api.go) and, to hand out a receipt, the log: it never sees prompt or
// response text except the bytes an operator uploads to open a receipt's
// commitments, which are hashed in memory and dropped.
package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/custody-gateway/custody/verify"
)

// Prefix is where the console is mounted.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the console reads. IsAdminKey and API are required.
type Config struct {
	// IsAdminKey reports whether key is an admin key (the gateway's
	// IsAdminKey). It is asked only at login.
	IsAdminKey func(key string) bool
	// API is the admin API as served to a caller in this process that
	// has checked the operator's session (gateway.Evidence.AdminAPI):
	// everything the pages show comes from it.
	API http.Handler
	// Log, when set, is this replica's transparency log: the record page
	// then offers a record's receipt, read from it.
	Log Log
	// VerifyReceipt, when set, checks pasted receipts (LedgerVerifier
	// builds one from the ledger); nil hides the receipt page.
	VerifyReceipt VerifyFunc
	// SessionKey signs session cookies and form tokens. Replicas behind
	// one address must share it; nil means a random key, so sessions end
	// when the process does.
	SessionKey []byte
	// SessionTTL is how long a login lasts; 0 means 12 hours.
	SessionTTL time.Duration
	// SecureCookie forces the cookie's Secure attribute when TLS ends in
	// front of custody; a request that arrived over TLS always gets it.
	SecureCookie bool
	// Window is the span of the overview; 0 means 24 hours.
	Window time.Duration
	// EventsPage is the number of events on a page of the timeline; 0
	// means 50.
	EventsPage int
	// MaxUpload bounds a receipt check's form (receipt, request and
	// response bytes); 0 means 64 MiB.
	MaxUpload int64
	// Logger receives errors the operator should see; nil means
	// slog.Default.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Models are the configured client-facing model names: only they get
	// a card on the overview, since a requested model name is whatever a
	// tenant sent (requests for others are counted in one line). nil
	// means every requested name gets a card.
	Models []string
	// LoginLimiter, when set, bounds wrong keys at login per client (the
	// gateway's AuthFailures, shared with its admin endpoints, so that
	// guesses cannot be spread over the two); nil means no limit.
	LoginLimiter LoginLimiter
}

// LoginLimiter counts wrong keys per client address.
type LoginLimiter interface {
	// Allow reports whether remoteAddr may try a key now; if not, how
	// long until it may.
	Allow(remoteAddr string) (retryAfter time.Duration, ok bool)
	// Fail counts a wrong key from remoteAddr.
	Fail(remoteAddr string)
}

// Log is this replica's transparency log; *ledger.Log satisfies it.
type Log interface {
	Receipt(ctx context.Context, index uint64, requestID string) (*verify.Receipt, error)
}

// Console is the console's http.Handler.
type Console struct {
	cfg    Config
	sess   *sessions
	pages  map[string]*template.Template
	mux    *http.ServeMux
	log    *slog.Logger
	now    func() time.Time
	static http.Handler
}

// New builds the console.
func New(cfg Config) (*Console, error) {
	if cfg.IsAdminKey == nil || cfg.API == nil {
		return nil, errors.New("console: IsAdminKey and API are required")
	}
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.EventsPage <= 0 {
		cfg.EventsPage = 50
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 64 << 20
	}
	c := &Console{cfg: cfg, log: cfg.Logger, now: cfg.Now, pages: map[string]*template.Template{}}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	var err error
	if c.sess, err = newSessions(cfg.SessionKey, cfg.SessionTTL, c.now); err != nil {
		return nil, err
	}
	for _, page := range []string{"login", "overview", "breakdowns", "events", "record", "receipt", "contract"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", page, err)
		}
		c.pages[page] = t
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	c.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(sub))

	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix+"static/", c.static)
	mux.Handle("GET "+Prefix+"login", c.handle(c.loginForm))
	mux.Handle("POST "+Prefix+"login", c.handle(c.login))
	mux.Handle("POST "+Prefix+"logout", c.admin(c.logout))
	mux.Handle("GET "+Prefix+"{$}", c.admin(c.overview))
	mux.Handle("GET "+Prefix+"breakdowns", c.admin(c.breakdowns))
	mux.Handle("GET "+Prefix+"events", c.admin(c.events))
	mux.Handle("GET "+Prefix+"contract", c.admin(c.contract))
	mux.Handle("GET "+Prefix+"record", c.admin(c.record))
	mux.Handle("GET "+Prefix+"receipt", c.admin(c.receiptForm))
	mux.Handle("POST "+Prefix+"receipt", c.admin(c.receiptCheck))
	mux.Handle(Prefix, c.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &httpError{status: http.StatusNotFound, msg: "no such page"}
	}))
	c.mux = mux
	return c, nil
}

// ServeHTTP serves the console under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No script, no frame, no third party: the page is forms, markup and
	// one stylesheet of its own.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	c.mux.ServeHTTP(w, r)
}

// Authorized reports whether r carries a live console session: for
// handlers mounted beside the console that want its login.
func (c *Console) Authorized(r *http.Request) bool {
	ck, err := r.Cookie(CookieName)
	return err == nil && c.sess.valid(ck.Value)
}

// httpError is an error with the status and the message the operator
// sees; any other error is logged and shown as a generic failure.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// handle adapts a handler returning error.
func (c *Console) handle(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var he *httpError
		if !errors.As(err, &he) {
			c.log.Error("console", "path", r.URL.Path, "err", err)
			he = &httpError{status: http.StatusInternalServerError, msg: "the console failed to answer; see the gateway's log"}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(he.status)
		fmt.Fprintln(w, he.msg)
	})
}

// render writes a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) error {
	t := c.pages[page]
	v := struct {
		Page string
		Csrf string
		Now  time.Time
		Has  struct{ Receipt bool }
		Data any
	}{Page: page, Now: c.now().UTC(), Data: data}
	v.Has.Receipt = c.cfg.VerifyReceipt != nil
	if ck, err := r.Cookie(CookieName); err == nil && c.sess.valid(ck.Value) {
		v.Csrf = c.sess.csrf(ck.Value)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return fmt.Errorf("rendering %s: %w", page, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

var funcs = template.FuncMap{
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"tsp": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	// hhmm is a bucket's start in a column header: day and minute.
	"hhmm": func(t time.Time) string { return t.UTC().Format("01-02 15:04") },
	"pct": func(n, of int64) string {
		if of == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
	},
}
