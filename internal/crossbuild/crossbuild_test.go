// Package crossbuild_test holds the cross-compile check in a test binary
// of its own: go test gives each package ten minutes, and on a cold build
// cache compiling modernc's libc for two more targets took most of that
// when it ran inside cmd/custody's tests beside the integration tests.
package crossbuild_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCrossBuild compiles the command and verify for Windows and macOS:
// an auditor on either must be able to run `custody verify` and `custody
// audit`, so nothing those commands import may be unix-only (serve and
// canary are, behind build tags; serve_other.go stands in for them).
//
// It is a compile check, not a build: `go list -export` compiles every
// package for the target (type errors, undefined unix-only symbols and
// missing build-tagged stand-ins all fail it) and stops short of linking
// two full binaries. The compiled packages stay in the build cache, so a second run
// costs seconds.
func TestCrossBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling takes a while; skipped with -short")
	}
	for _, target := range []struct{ goos, goarch string }{
		{"windows", "amd64"},
		{"darwin", "arm64"},
	} {
		t.Run(target.goos, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-export", "-f", "{{if not .Export}}{{.ImportPath}}: no export data{{end}}",
				"github.com/custody-gateway/custody/cmd/custody", "github.com/custody-gateway/custody/verify")
			cmd.Env = append(os.Environ(), "GOOS="+target.goos, "GOARCH="+target.goarch, "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if complaint := listComplaint(out); err != nil || complaint != "" {
				t.Fatalf("GOOS=%s GOARCH=%s go list -export ./cmd/custody ./verify: %v\n%s", target.goos, target.goarch, err, out)
			}
		})
	}
}

// listComplaint is what go list printed besides its progress: a first run
// on a fresh machine downloads the target's own modules (modernc's
// mattn/go-isatty and ncruces/go-strftime for windows), and "go:
// downloading" lines say so on stderr without anything being wrong.
func listComplaint(out []byte) string {
	var rest []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !strings.HasPrefix(line, "go: downloading ") {
			rest = append(rest, line)
		}
	}
	return strings.Join(rest, "\n")
}

func TestListComplaint(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"", ""},
		{"go: downloading github.com/mattn/go-isatty v0.0.24\ngo: downloading github.com/ncruces/go-strftime v1.1.0\n", ""},
		{"go: downloading x v1\ngithub.com/custody-gateway/custody/verify: no export data\n", "github.com/custody-gateway/custody/verify: no export data"},
		{"# pkg\n./x.go:1: undefined: unix.Foo\n", "# pkg\n./x.go:1: undefined: unix.Foo"},
	} {
		if got := listComplaint([]byte(c.out)); got != c.want {
			t.Errorf("listComplaint(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}
