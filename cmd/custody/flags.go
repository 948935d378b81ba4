package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// strings is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// newFlags makes a FlagSet that reports usage errors to stderr and
// returns them instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("custody "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, returning exit code 2 on a usage error (0 for
// -h) and ok=false when the command must stop.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "custody: "+format+"\n", args...)
	return 2
}
