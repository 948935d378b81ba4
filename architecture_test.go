package custody

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestImportsPointDown holds docs/architecture.md to the code: every
// package of the module has a ring there, every import of another
// package of the module points to a lower ring or is a listed exception,
// every listed exception still exists, and none of the imports
// docs/architecture.md rules out for good is made or excused.
func TestImportsPointDown(t *testing.T) {
	ring, exceptions := readArchitecture(t, "docs/architecture.md")
	for _, n := range never {
		if exceptions[n[0]+" "+n[1]] {
			t.Errorf("%s must never import %s (docs/architecture.md, Rules): it cannot be an exception", n[0], n[1])
		}
	}
	const module = "github.com/custody-gateway/custody"
	short := func(p string) string {
		if p == module {
			return "."
		}
		return strings.TrimPrefix(p, module+"/")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := short(f[0])
		rf, ok := ring[from]
		if !ok {
			t.Errorf("package %s is not in docs/architecture.md: give it a ring", from)
			continue
		}
		for _, imp := range f[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := short(imp)
			for _, n := range never {
				if from == n[0] && to == n[1] {
					t.Errorf("%s imports %s: it never may (docs/architecture.md, Rules)", from, to)
				}
			}
			rt, ok := ring[to]
			if !ok || rt < rf {
				continue
			}
			if exceptions[from+" "+to] {
				seen[from+" "+to] = true
				continue
			}
			t.Errorf("%s (ring %d) imports %s (ring %d): imports point to lower rings (docs/architecture.md)", from, rf, to, rt)
		}
	}
	for e := range exceptions {
		if !seen[e] {
			t.Errorf("the exception %q no longer exists: remove it from docs/architecture.md", e)
		}
	}
}

// never are the imports turned in issue 31, held whatever the rings
// become: the webhooks need the event type, not the index; accounting
// computes the band the prompt-token check judges, not the other way;
// the gateway sees canaries, evals and the contamination matcher through
// its own interfaces, injected by the composition root.
var never = [][2]string{
	{"notify", "index"},
	{"accounting", "check"},
	{"gateway", "canary"},
	{"gateway", "eval"},
	{"gateway", "contamination"},
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// readArchitecture reads the rings table (| N | `pkg`, ... | ... |) and
// the exceptions table (| `from` | `to` | why |).
func readArchitecture(t *testing.T, path string) (map[string]int, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ring, exceptions := map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 {
			continue
		}
		first, second := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if n, err := strconv.Atoi(first); err == nil {
			for _, m := range codeSpan.FindAllStringSubmatch(second, -1) {
				if _, dup := ring[m[1]]; dup {
					t.Errorf("%s is in two rings", m[1])
				}
				ring[m[1]] = n
			}
			continue
		}
		a, b := codeSpan.FindStringSubmatch(first), codeSpan.FindStringSubmatch(second)
		if a != nil && b != nil && a[0] == first && b[0] == second {
			exceptions[a[1]+" "+b[1]] = true
		}
	}
	if len(ring) < 30 {
		t.Fatalf("read %d packages from %s: the rings table did not parse", len(ring), path)
	}
	return ring, exceptions
}
