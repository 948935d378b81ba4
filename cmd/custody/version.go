package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are set at build time with
// -ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)";
// without them the commit comes from the build's VCS stamp, if any.
var version, commit = "dev", ""

// runVersion is `custody version`: the version, the commit it was built
// from, and the Go toolchain and platform.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	withSynopsis(fs, "custody version", "Prints custody's version, the commit it was built from, and the Go version and platform.",
		"0  printed")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "version takes no arguments, got %q", fs.Args())
	}
	rev, modified := commit, ""
	if bi, ok := debug.ReadBuildInfo(); ok && rev == "" {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
	}
	if rev == "" {
		rev = "unknown (build with -buildvcs or -ldflags -X main.commit=...)"
	}
	fmt.Fprintf(stdout, "custody %s\ncommit %s%s\n%s %s/%s\n", version, rev, modified, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
