package main

import (
	"bytes"

	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// litewitnessVersion is the independent witness the tests run against
// (C2SP tlog-witness, filippo.io/torchwood): built once with go install
// into the user cache.
const litewitnessVersion = "v0.6.1"

func litewitnessBinaries(t *testing.T) (lw, ctl string) {
	t.Helper()
	for _, tool := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	// The witness tests run in parallel: one builds the binaries.
	litewitnessMu.Lock()
	defer litewitnessMu.Unlock()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "custody-litewitness-"+litewitnessVersion)
	lw, ctl = filepath.Join(bin, "litewitness"), filepath.Join(bin, "witnessctl")
	if _, err := os.Stat(ctl); err == nil {
		if _, err := os.Stat(lw); err == nil {
			return lw, ctl
		}
	}
	cmd := exec.Command("go", "install", "filippo.io/torchwood/cmd/litewitness@"+litewitnessVersion, "filippo.io/torchwood/cmd/witnessctl@"+litewitnessVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install litewitness: %v\n%s", err, out)
	}
	return lw, ctl
}

var litewitnessMu sync.Mutex

// liteWitness is one litewitness process with its own ssh-agent, behind
// a front the test holds for its whole life.
//
// litewitness takes its address as a flag and logs "listening" before it
// binds, so it cannot be given port 0 and asked which port it got. A port
// picked free and closed can be taken by another test before litewitness
// binds it (CI saw a witness whose port answered the readiness dial and
// then refused every connection). So custody talks to the front, whose
// listener the test never closes, and the front forwards to whichever
// port the current litewitness process bound: a start that loses its
// port to another process just picks another.
type liteWitness struct {
	t           *testing.T
	name, vkey  string
	bin, db     string
	sock, fp    string
	agent, proc *exec.Cmd
	exited      chan struct{}
	stderr      *lockedBuffer
	front       net.Listener
	backend     atomic.Pointer[string] // host:port of the running process; nil when stopped
}

// freeAddr is a loopback address nothing listened on a moment ago.
// Another process may take it at any time: use it only for a process
// that is then checked to answer there as itself.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startLiteWitness sets up a witness that knows the log (origin, vkey)
// and starts it.
func startLiteWitness(t *testing.T, lw, ctl, name, origin, logVKey string) *liteWitness {
	t.Helper()
	dir, err := os.MkdirTemp("", "lw-") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	w := &liteWitness{t: t, name: name, bin: lw, db: filepath.Join(dir, "w.db"), sock: filepath.Join(dir, "agent.sock")}
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Env = append(os.Environ(), env...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", filepath.Join(dir, "key"))
	w.agent = exec.Command("ssh-agent", "-D", "-a", w.sock)
	if err := w.agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.agent.Process.Kill(); w.agent.Wait() })
	// The socket file exists from ssh-agent's bind, before its listen:
	// wait until a connection is accepted, not until the file is there
	// (ssh-add in that gap fails with "Connection refused").
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", w.sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ssh-agent did not start")
		}
	}
	run([]string{"SSH_AUTH_SOCK=" + w.sock}, "ssh-add", "-q", filepath.Join(dir, "key"))
	w.fp = strings.Fields(run(nil, "ssh-keygen", "-l", "-E", "sha256", "-f", filepath.Join(dir, "key.pub")))[1]
	run(nil, ctl, "add-log", "-db", w.db, "-origin", origin)
	run(nil, ctl, "add-key", "-db", w.db, "-origin", origin, "-key", logVKey)

	w.front, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			if b := w.backend.Load(); b != nil {
				r.SetURL(&url.URL{Scheme: "http", Host: *b})
			}
		},
		// A stopped witness is a dead peer: the connection ends without
		// an answer, as it would with the process gone.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	front := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.backend.Load() == nil {
			panic(http.ErrAbortHandler)
		}
		proxy.ServeHTTP(rw, r)
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go front.Serve(w.front)
	// Registered once, here: a cleanup registered by each start would run
	// before the cleanups of what the test started after the witness
	// (custody serve), stopping a restarted witness under a live gateway.
	t.Cleanup(func() { w.stop(); front.Close() })
	w.start()
	return w
}

var lwVKey = regexp.MustCompile(`vkey=(\S+)`)

// start runs litewitness on a free port and points the front at it once
// that port answers as this witness. A process that exits before then
// (its port taken between the pick and its bind) is started again on
// another port.
func (w *liteWitness) start() {
	t := w.t
	t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		w.stderr = &lockedBuffer{}
		w.proc = exec.Command(w.bin, "-name", w.name, "-db", w.db, "-ssh-agent", w.sock, "-key", w.fp, "-listen", addr)
		w.proc.Stdout, w.proc.Stderr = w.stderr, w.stderr
		if err := w.proc.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func(p *exec.Cmd) { p.Wait(); close(exited) }(w.proc)
		w.exited = exited
		if w.answers(addr, exited) {
			w.vkey = strings.Trim(lwVKey.FindStringSubmatch(w.stderr.String())[1], `"`)
			w.backend.Store(&addr)
			return
		}
		select {
		case <-exited:
			if attempt < 5 {
				t.Logf("litewitness %s exited before it answered on %s; again on another port:\n%s", w.name, addr, w.stderr)
				continue
			}
		default:
			w.proc.Process.Kill()
			<-exited
		}
		t.Fatalf("litewitness %s did not start:\n%s", w.name, w.stderr)
	}
}

// answers waits until addr serves this witness's index page (its name
// and verifier key, so not another process that holds the port), or
// until the process exits or 20 seconds pass.
func (w *liteWitness) answers(addr string, exited <-chan struct{}) bool {
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return false
		default:
		}
		m := lwVKey.FindStringSubmatch(w.stderr.String())
		if m == nil {
			continue
		}
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "# litewitness "+w.name+"\n") && strings.Contains(string(body), strings.Trim(m[1], `"`)) {
			return true
		}
	}
	return false
}

// stop ends the witness process (its database and key stay); the front
// then drops every connection.
func (w *liteWitness) stop() {
	w.backend.Store(nil)
	if w.proc != nil {
		select {
		case <-w.exited:
		default:
			w.proc.Process.Kill()
			<-w.exited
		}
	}
}

func (w *liteWitness) url() string { return "http://" + w.front.Addr().String() + "/" }

// cosigners is the witness names with a signature line in a checkpoint.
func cosigners(cp string, ws []*liteWitness) []string {
	var names []string
	for _, w := range ws {
		if strings.Contains(cp, "\n— "+w.name+" ") {
			names = append(names, w.name)
		}
	}
	return names
}

// TestWitnessCosigning runs custody with three real litewitness
// processes and a 2-of-3 policy: checkpoints are cosigned before they are
// published, receipts carry the cosignatures and verify with the witness
// keys (online and offline), forgeries and a checkpoint the witnesses
// never saw fail, one witness down still publishes, two down stops
// publishing (and /readyz says why) while requests are still served and
// recorded, and publishing resumes when a witness is back.
func TestWitnessCosigning(t *testing.T) {
	t.Parallel() // its own data dir and ports
	if testing.Short() {
		t.Skip("builds and runs litewitness; skipped with -short")
	}
	lw, ctl := litewitnessBinaries(t)
	dir := t.TempDir()
	const origin = "witness.custody.test/log"
	skey, vkey, err := note.GenerateKey(rand.Reader, origin)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "signing.key")
	os.WriteFile(keyFile, []byte(skey+"\n"), 0o600)
	vkeyFile := filepath.Join(dir, "log.vkey")
	os.WriteFile(vkeyFile, []byte(vkey+"\n"), 0o600)

	var ws []*liteWitness
	for i := range 3 {
		ws = append(ws, startLiteWitness(t, lw, ctl, fmt.Sprintf("w%d.custody.test", i+1), origin, vkey))
	}
	var wcfg strings.Builder
	fmt.Fprintf(&wcfg, "ledger:\n  origin: %s\n  key_file: %s\n  batch_max_age: 50ms\n  witness_policy: {quorum: 2, timeout: 2s}\n  witnesses:\n", origin, keyFile)
	for _, w := range ws {
		fmt.Fprintf(&wcfg, "    - {name: %s, vkey: %q, url: %q}\n", w.name, w.vkey, w.url())
	}
	s := startServe(t, dir, "--config", writeConfig(t, dir, twoTenants+wcfg.String()))
	witnessArgs := []string{"--witness-quorum", "2"}
	for _, w := range ws {
		witnessArgs = append(witnessArgs, "--witness-key", w.vkey)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	// request sends one chat completion and returns its receipt file
	// once the receipt carries a checkpoint (or after wait, without).
	type receipt struct {
		Checkpoint string `json:"checkpoint"`
		Cosigned   bool   `json:"cosigned"`
		Index      uint64 `json:"index"`
	}
	n := 0
	request := func(wait time.Duration) (string, receipt) {
		t.Helper()
		n++
		resp, body := post(t, s.URL+"/v1/chat/completions", "sk-acme", fmt.Sprintf(`{"model":"sim-1","messages":[{"role":"user","content":"witness me %d"}]}`, n))
		if resp.StatusCode != 200 || resp.Header.Get("Custody-Verdict") != "verified" {
			t.Fatalf("request %d: %d %s", n, resp.StatusCode, body)
		}
		var r receipt
		var raw string
		for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
			_, raw = get(t, s.URL+resp.Header.Get("Custody-Receipt"), "sk-acme")
			r = receipt{}
			if err := json.Unmarshal([]byte(raw), &r); err != nil {
				t.Fatalf("receipt: %v %s", err, raw)
			}
			if r.Checkpoint != "" || time.Now().After(deadline) {
				break
			}
		}
		return write(fmt.Sprintf("receipt-%d.json", n), raw), r
	}

	// All three up: the receipt's checkpoint is cosigned by at least two.
	rf, r := request(15 * time.Second)
	if got := cosigners(r.Checkpoint, ws); len(got) < 2 || !r.Cosigned {
		t.Fatalf("checkpoint cosigned by %q (cosigned=%v):\n%s\nserve: %s", got, r.Cosigned, r.Checkpoint, s.stderr)
	}
	verifyArgs := append([]string{"verify", "--log", s.URL, "--key", vkeyFile}, witnessArgs...)
	code, out, errOut := runCmd(t, dir, append(verifyArgs, rf)...)
	if code != exitOK || !strings.Contains(out, "cosigned by w") {
		t.Fatalf("verify with the witness keys: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCmd(t, dir, append([]string{"audit", "--log", s.URL, "--key", vkeyFile}, witnessArgs...)...); code != exitOK || !strings.Contains(out, "checkpoint cosigned by") {
		t.Fatalf("audit with the witness keys: %d\n%s%s", code, out, errOut)
	}
	bundle := filepath.Join(dir, "bundle.json")
	if code, out, errOut := runCmd(t, dir, append(verifyArgs, "--export", bundle, rf)...); code != exitOK {
		t.Fatalf("export: %d\n%s%s", code, out, errOut)
	}
	offline := append([]string{"verify", "--offline", "--key", vkeyFile}, witnessArgs...)
	if code, out, errOut := runCmd(t, dir, append(offline, bundle)...); code != exitOK {
		t.Fatalf("offline with the witness keys: %d\n%s%s", code, out, errOut)
	}

	// A forged cosignature: one byte of a witness's signature changed.
	b, _ := os.ReadFile(bundle)
	var bu map[string]any
	json.Unmarshal(b, &bu)
	proof := bu["proof"].(string)
	line := regexp.MustCompile(`— (w[0-9].custody.test) (\S+)\n`).FindStringSubmatchIndex(proof)
	if line == nil {
		t.Fatalf("no cosignature line in %q", proof)
	}
	sig, _ := base64.StdEncoding.DecodeString(proof[line[4]:line[5]])
	sig[len(sig)-1] ^= 1
	bu["proof"] = proof[:line[4]] + base64.StdEncoding.EncodeToString(sig) + proof[line[5]:]
	forged, _ := json.Marshal(bu)
	if code, _, errOut := runCmd(t, dir, append(offline, write("forged.json", string(forged)))...); code != exitFailed || !strings.Contains(errOut, "forged signature by w") {
		t.Fatalf("forged cosignature: exit %d, want 1: %s", code, errOut)
	}

	// A split view: a checkpoint custody's key signs but that was never
	// sent to the witnesses (another tree). They refuse to cosign it, and
	// a bundle built on it fails verification with the witness keys.
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	var fakeRoot [32]byte
	rand.Read(fakeRoot[:])
	size := r.Index + 5
	fake, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", origin, size, base64.StdEncoding.EncodeToString(fakeRoot[:]))}, signer)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		old := strings.Split(r.Checkpoint, "\n")[1]
		body := fmt.Sprintf("old %s\n%s\n\n%s", old, base64.StdEncoding.EncodeToString(fakeRoot[:]), fake)
		resp, err := http.Post(w.url()+"add-checkpoint", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("witness %s cosigned a checkpoint custody never published", w.name)
		}
		t.Logf("witness %s refused the split-view checkpoint: %s", w.name, resp.Status)
	}
	bu["proof"] = proof[:strings.Index(proof, "\n\n")+2] + string(fake)
	split, _ := json.Marshal(bu)
	if code, _, errOut := runCmd(t, dir, append(offline, write("split.json", string(split)))...); code != exitFailed {
		t.Fatalf("split-view checkpoint: exit %d, want 1: %s", code, errOut)
	}

	// One witness down: checkpoints are still published, cosigned by the
	// other two.
	ws[2].stop()
	rf, r = request(15 * time.Second)
	if got := cosigners(r.Checkpoint, ws); len(got) < 2 || slicesContains(got, ws[2].name) {
		t.Fatalf("with %s down: cosigned by %q\n%s", ws[2].name, got, s.stderr)
	}
	if code, out, errOut := runCmd(t, dir, append(verifyArgs, rf)...); code != exitOK {
		t.Fatalf("verify with one witness down: %d\n%s%s", code, out, errOut)
	}

	// Two down: requests are served and recorded (the receipt's signature
	// is valid), but no checkpoint covers them, and /readyz says why.
	ws[1].stop()
	rf, r = request(3 * time.Second)
	if r.Checkpoint != "" {
		t.Fatalf("a checkpoint was published with one witness of 2 needed:\n%s", r.Checkpoint)
	}
	if code, _, errOut := runCmd(t, dir, append(verifyArgs, rf)...); code != exitPending {
		t.Fatalf("verify with the quorum down: exit %d, want 3: %s", code, errOut)
	}
	resp, body := get(t, s.URL+"/readyz", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "witness quorum not met: 1 of 3 witnesses answer, 2 needed") || !strings.Contains(body, ws[1].name) {
		t.Fatalf("/readyz: %d\n%s", resp.StatusCode, body)
	}
	_, metrics := get(t, s.URL+"/metrics", "adm-test")
	if !strings.Contains(metrics, `custody_witness_up{witness="`+ws[1].name+`"} 0`) || !strings.Contains(metrics, `custody_witness_up{witness="`+ws[0].name+`"} 1`) ||
		regexp.MustCompile(`(?m)^custody_ledger_unpublished_leaves 0$`).MatchString(metrics) {
		t.Fatalf("metrics:\n%s", grepLines(metrics, "witness", "unpublished"))
	}

	// A witness back: the pending leaf gets its cosigned checkpoint.
	ws[1].start()
	if code, out, errOut := runCmd(t, dir, append(append(verifyArgs, "--wait", "20s"), rf)...); code != exitOK {
		t.Fatalf("verify after a witness came back: %d\n%s%s\nserve: %s", code, out, errOut, s.stderr)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, body := get(t, s.URL+"/readyz", ""); !strings.Contains(body, "witness quorum not met") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still reports the quorum down:\n%s", body)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func grepLines(s string, words ...string) string {
	var out bytes.Buffer
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out.WriteString(l + "\n")
				break
			}
		}
	}
	return out.String()
}
