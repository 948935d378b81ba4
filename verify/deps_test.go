package verify

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEveryGOOS compiles the package for systems the ledger engine does
// not run on (Plan 9, a browser's wasm): clients import it there. Windows
// and macOS are internal/crossbuild's, which compiles verify and the
// command for both; compiling Windows here too did the same work twice,
// at once, on a cold build cache.
func TestEveryGOOS(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling takes a while; skipped with -short")
	}
	for _, target := range [][2]string{{"plan9", "amd64"}, {"js", "wasm"}} {
		cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOOS="+target[0], "GOARCH="+target[1], "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s GOARCH=%s go build: %v\n%s", target[0], target[1], err, out)
		}
	}
}

// TestImportsNoEngine: the verifier depends on neither the ledger engine
// nor any tessera storage driver, nor on tessera's client and the
// telemetry and logging libraries it brings (proof.go builds proofs from
// tiles itself): a client that imports verify gets merkle, note and little
// else.
func TestImportsNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/custody-gateway/custody/ledger" || strings.HasPrefix(dep, "github.com/transparency-dev/tessera/storage") ||
			dep == "github.com/transparency-dev/tessera" || dep == "github.com/transparency-dev/tessera/client" ||
			strings.HasPrefix(dep, "go.opentelemetry.io/") || strings.HasPrefix(dep, "k8s.io/klog") {
			t.Errorf("package verify depends on %s", dep)
		}
	}
}
