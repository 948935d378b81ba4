package console

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// operator is a browser-like client of the console: a cookie jar, no
// redirects followed.
type operator struct {
	e   *env
	c   *http.Client
	hdr http.Header // extra headers on every request
}

func (e *env) operator() *operator {
	jar, _ := cookiejar.New(nil)
	c := *e.srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &operator{e: e, c: &c, hdr: http.Header{}}
}

func (o *operator) send(req *http.Request) (*http.Response, string) {
	o.e.t.Helper()
	for k, v := range o.hdr {
		req.Header[k] = v
	}
	resp, err := o.c.Do(req)
	if err != nil {
		o.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp, b.String()
}

func (o *operator) get(path string) (*http.Response, string) {
	req, _ := http.NewRequest("GET", o.e.srv.URL+path, nil)
	return o.send(req)
}

func (o *operator) post(path string, form url.Values) (*http.Response, string) {
	req, _ := http.NewRequest("POST", o.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return o.send(req)
}

// multipart posts fields in order (csrf first, as the page's form does);
// a name starting with "@" is sent as a file part.
func (o *operator) multipart(path string, fields [][2]string) (*http.Response, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if name, ok := strings.CutPrefix(f[0], "@"); ok {
			w, _ := mw.CreateFormFile(name, name+".bin")
			w.Write([]byte(f[1]))
		} else {
			mw.WriteField(f[0], f[1])
		}
	}
	mw.Close()
	req, _ := http.NewRequest("POST", o.e.srv.URL+path, &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return o.send(req)
}

func (o *operator) login() {
	o.e.t.Helper()
	resp, body := o.post("/ui/login", url.Values{"key": {adminKey}})
	if resp.StatusCode != http.StatusSeeOther {
		o.e.t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (o *operator) csrf(path string) string {
	o.e.t.Helper()
	_, body := o.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		o.e.t.Fatalf("no csrf token on %s", path)
	}
	return m[1]
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	return nil
}

func TestConsole(t *testing.T) {
	e := newEnv(t, false)
	t.Run("LoginRequired", func(t *testing.T) { testLoginRequired(t, e) })
	t.Run("Login", func(t *testing.T) { testLogin(t, e) })
	t.Run("CSRF", func(t *testing.T) { testCSRF(t, e) })
	t.Run("Overview", func(t *testing.T) { testOverview(t, e) })
	t.Run("Events", func(t *testing.T) { testEvents(t, e) })
	t.Run("Record", func(t *testing.T) { testRecord(t, e) })
	t.Run("ReceiptCheck", func(t *testing.T) { testReceiptCheck(t, e) })
}

func testLoginRequired(t *testing.T, e *env) {
	o := e.operator()
	for _, path := range []string{"/ui/", "/ui/events", "/ui/record?id=" + e.ids.verified, "/ui/receipt"} {
		resp, _ := o.get(path)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login" {
			t.Errorf("GET %s without a session: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp, _ := o.multipart("/ui/receipt", [][2]string{{"csrf", "x"}, {"receipt", string(e.receipt(e.ids.verified))}})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /ui/receipt without a session: %d", resp.StatusCode)
	}
	// A forged cookie is no session.
	o.c.Jar.SetCookies(mustURL(e.srv.URL+"/ui/"), []*http.Cookie{{Name: CookieName, Value: adminKey, Path: "/ui/"}})
	if resp, _ := o.get("/ui/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the admin key itself as the cookie: %d, want a redirect to login", resp.StatusCode)
	}
}

func mustURL(s string) *url.URL { u, _ := url.Parse(s); return u }

func testLogin(t *testing.T, e *env) {
	for _, c := range []struct {
		name, key string
		ok        bool
	}{
		{"admin key", adminKey, true},
		{"admin key with spaces", "  " + adminKey + "\n", true},
		{"tenant key", "sk-acme", false},
		{"unknown key", "nope", false},
		{"empty", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := e.operator()
			resp, body := o.post("/ui/login", url.Values{"key": {c.key}})
			ck := sessionCookie(resp)
			if !c.ok {
				if resp.StatusCode != http.StatusUnauthorized || ck != nil || !strings.Contains(body, "not an admin key") {
					t.Errorf("%d, cookie %v", resp.StatusCode, ck)
				}
				return
			}
			if resp.StatusCode != http.StatusSeeOther || ck == nil {
				t.Fatalf("%d, cookie %v", resp.StatusCode, ck)
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/ui/" || ck.Secure {
				t.Errorf("cookie attributes %+v (plain HTTP: Secure unset)", ck)
			}
			if strings.Contains(ck.Value, adminKey) || !e.console.ValidSession(ck.Value) {
				t.Errorf("cookie value %q: want a session token, not the key", ck.Value)
			}
			if resp, _ := o.get("/ui/"); resp.StatusCode != http.StatusOK {
				t.Errorf("overview after login: %d", resp.StatusCode)
			}
			// The session grants the console, not the gateway's admin API.
			req, _ := http.NewRequest("GET", e.srv.URL+"/v1/custody/records", nil)
			req.AddCookie(ck)
			if resp, _ := o.send(req); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("admin API with the console cookie: %d, want 401", resp.StatusCode)
			}
		})
	}
	t.Run("cross-site login refused", func(t *testing.T) {
		o := e.operator()
		o.hdr.Set("Origin", "https://evil.example")
		if resp, _ := o.post("/ui/login", url.Values{"key": {adminKey}}); resp.StatusCode != http.StatusForbidden || sessionCookie(resp) != nil {
			t.Errorf("%d", resp.StatusCode)
		}
	})
}

func TestSecureCookieOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second gateway")
	}
	e := newEnv(t, true)
	resp, _ := e.operator().post("/ui/login", url.Values{"key": {adminKey}})
	if ck := sessionCookie(resp); ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie over TLS: %+v", ck)
	}
}

func testCSRF(t *testing.T, e *env) {
	o := e.operator()
	o.login()
	token := o.csrf("/ui/")
	for _, c := range []struct {
		name   string
		form   url.Values
		hdr    [2]string
		status int
	}{
		{"no token", url.Values{}, [2]string{}, http.StatusForbidden},
		{"wrong token", url.Values{"csrf": {"AAAA"}}, [2]string{}, http.StatusForbidden},
		{"cross-site fetch", url.Values{"csrf": {token}}, [2]string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"foreign origin", url.Values{"csrf": {token}}, [2]string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"null origin", url.Values{"csrf": {token}}, [2]string{"Origin", "null"}, http.StatusForbidden},
		{"same origin with token", url.Values{"csrf": {token}}, [2]string{"Origin", e.srv.URL}, http.StatusSeeOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.srv.URL+"/ui/logout", strings.NewReader(c.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if c.hdr[0] != "" {
				req.Header.Set(c.hdr[0], c.hdr[1])
			}
			resp, body := o.send(req)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if c.status == http.StatusSeeOther {
				if ck := sessionCookie(resp); ck == nil || ck.MaxAge >= 0 {
					t.Errorf("logout did not clear the cookie: %+v", ck)
				}
			}
		})
	}
	// The receipt form's token is its first part.
	o = e.operator()
	o.login()
	rcpt := string(e.receipt(e.ids.verified))
	if resp, _ := o.multipart("/ui/receipt", [][2]string{{"receipt", rcpt}, {"csrf", o.csrf("/ui/receipt")}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("receipt form with its token last: %d", resp.StatusCode)
	}
	if resp, _ := o.multipart("/ui/receipt", [][2]string{{"csrf", token}, {"receipt", rcpt}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("receipt form with another session's token: %d", resp.StatusCode)
	}
}

// noLeaks checks a page for prompt text and for anything fetched from
// elsewhere.
func noLeaks(t *testing.T, page string) {
	t.Helper()
	if strings.Contains(page, marker) {
		t.Error("the page shows prompt text")
	}
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`, `@import`, `url(`, "<script"} {
		if strings.Contains(page, attr) {
			t.Errorf("the page has %s", attr)
		}
	}
}

func testOverview(t *testing.T, e *env) {
	o := e.operator()
	o.login()
	resp, page := o.get("/ui/")
	if resp.StatusCode != 200 {
		t.Fatalf("%d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	noLeaks(t, page)
	for _, want := range []string{
		`id="model-sim-1"`, `id="model-liar-1"`, `id="model-fallback-1"`,
		`<td class="total">2</td>`,              // sim-1
		`<td class="rejected">1 <small>100.0%`,  // liar-1
		`<td class="fallbacks">1 <small>100.0%`, // fallback-1
		`<svg class="mix"`, `sim-fallback-1`,    // the liar's effective model
		`id="out-of-service"`, `<strong>liar-1/liar</strong> is out of service since`, `<strong>fallback-1/broken</strong> is out of service`,
		`<strong>out of service</strong> since`, `2 failing runs in a row`, // the routes table says why
		`<svg class="traffic"`, `canary probes from`, `id="log-status"`, `none (no witnesses configured)`,
		`<a href="/ui/events?code=model_mismatch">model_mismatch</a>`, // liar-1's rejections by code
		`<a href="/ui/record?id=` + e.ids.rejected + `">`,             // the latest rejections link to their records
	} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
	for _, c := range []struct {
		window string
		status int
	}{{"1h", 200}, {"7d", 200}, {"1y", 400}, {"<b>", 400}} {
		if resp, page := o.get("/ui/?window=" + url.QueryEscape(c.window)); resp.StatusCode != c.status || (c.status == 200 && !strings.Contains(page, `class="here">`+c.window)) {
			t.Errorf("window %s: %d", c.window, resp.StatusCode)
		}
	}
	resp, css := o.get("/ui/static/console.css")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || strings.Contains(css, "url(") {
		t.Errorf("stylesheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func testEvents(t *testing.T, e *env) {
	o := e.operator()
	o.login()
	for _, c := range []struct {
		typ      string
		status   int
		has, not string
	}{
		{"", 200, `id="older"`, ""}, // 4 to a page (EventsPage): the timeline has more
		{"fallback", 200, e.ids.fallback, e.ids.rejected},
		{"violation", 200, e.ids.rejected, e.ids.fallback},
		{"canary", 200, `<td class="route">liar-1/liar</td><td class="provider">liar</td>`, e.ids.rejected},
		{"bogus", 400, "", ""},
	} {
		t.Run("type="+c.typ, func(t *testing.T) {
			resp, page := o.get("/ui/events?type=" + c.typ)
			if resp.StatusCode != c.status {
				t.Fatalf("%d", resp.StatusCode)
			}
			noLeaks(t, page)
			if !strings.Contains(page, c.has) || (c.not != "" && strings.Contains(page, c.not)) {
				t.Errorf("page should have %q and not %q", c.has, c.not)
			}
		})
	}
}

func testRecord(t *testing.T, e *env) {
	o := e.operator()
	o.login()
	for _, c := range []struct {
		name, id string
		status   int
		has      []string
	}{
		{"verified", e.ids.verified, 200, []string{"integrated: leaf", `class="verdict verified"`, "<td>prompt_tokens</td>", "check-receipt"}},
		{"rejected", e.ids.rejected, 200, []string{`class="verdict rejected"`, "model_mismatch", "sim-fallback-1"}},
		{"fallback", e.ids.fallback, 200, []string{"fallback broken&gt;sim"}},
		{"unknown", "01KB7Z3M8X5V9Q2R4T6W8Y0A1C", 404, []string{"No record of that request id."}},
		{"no id", "", 200, []string{`id="lookup"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, page := o.get("/ui/record?id=" + url.QueryEscape(c.id))
			if resp.StatusCode != c.status {
				t.Fatalf("%d", resp.StatusCode)
			}
			noLeaks(t, page)
			for _, want := range c.has {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %s", want)
				}
			}
		})
	}
}

func testReceiptCheck(t *testing.T, e *env) {
	o := e.operator()
	o.login()
	id := e.ids.verified
	x := e.sent[id]
	rcpt := string(e.receipt(id))
	tampered := bytes.Replace(x.response, []byte(`"content":"`), []byte(`"content":"X`), 1)
	for _, c := range []struct {
		name   string
		fields [][2]string
		status int
		has    []string
	}{
		{"receipt alone", [][2]string{{"receipt", rcpt}}, 200, []string{"Verified", "<strong>signature</strong>: ✓", "<strong>in the log</strong>: ✓"}},
		{"receipt as a file", [][2]string{{"receipt", ""}, {"@receipt_file", rcpt}}, 200, []string{"Verified"}},
		{"with request and response", [][2]string{{"receipt", rcpt}, {"@request", string(x.request)}, {"@response", string(x.response)}}, 200,
			[]string{"Verified", "<strong>request bytes</strong>: ✓", "<strong>response bytes</strong>: ✓"}},
		{"tampered response", [][2]string{{"receipt", rcpt}, {"@response", string(tampered)}}, 200,
			[]string{"Not verified", `class="failing"><strong>response bytes</strong>: ✗`}},
		{"another request's bytes", [][2]string{{"receipt", rcpt}, {"@request", string(e.sent[e.ids.fallback].request)}}, 200,
			[]string{"Not verified", "do not open the request commitment"}},
		{"not a receipt", [][2]string{{"receipt", `{"v":1}`}}, 422, []string{"not a custody receipt"}},
		{"nothing", [][2]string{{"receipt", ""}}, 400, []string{"Paste a receipt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fields := append([][2]string{{"csrf", o.csrf("/ui/receipt")}}, c.fields...)
			resp, page := o.multipart("/ui/receipt", fields)
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s", resp.StatusCode, page)
			}
			for _, want := range c.has {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %s", want)
				}
			}
			if strings.Contains(page, marker) && !strings.Contains(c.name, "request") {
				t.Error("the page shows prompt text")
			}
		})
	}
	t.Run("prefilled from a record", func(t *testing.T) {
		_, page := o.get("/ui/receipt?id=" + id)
		if !strings.Contains(page, `&#34;request_id&#34;: &#34;`+id) {
			t.Errorf("receipt not prefilled:\n%s", page)
		}
	})
}
