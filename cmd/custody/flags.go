package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit codes shared by every command (each command's -help states them).
const (
	exitOK     = 0 // success: valid, clean, all probes passed
	exitFailed = 1 // invalid, tampered, failed (reason on stderr)
	exitUsage  = 2 // the command line is wrong
	// exitPending is verify's "the signature is valid but the log does
	// not hold the leaf yet": the promise without the evidence. Retry,
	// or wait with --wait.
	exitPending = 3
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// newFlags makes a FlagSet that reports usage errors to stderr and
// returns them instead of exiting. Its -h/--help prints the flag's
// defaults (every flag, with its help text).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("custody "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// withSynopsis makes fs's usage message (its -h, --help and `custody help
// NAME`) start with the command's synopsis ("custody verify [--log
// URL|DIR] ... RECEIPT") and what it does, then list its flags, and end
// with its exit codes: each of exits is "CODE  meaning" (for example
// "0  valid"), and "2  usage error", which every command shares, follows
// them. A flag's placeholder is the word in backquotes in its usage
// ("read the config from `FILE`"), as flag.PrintDefaults shows it.
func withSynopsis(fs *flag.FlagSet, synopsis, about string, exits ...string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis, about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		codes := append(slices.Clone(exits), fmt.Sprintf("%d  usage error (a bad flag or argument; the reason on stderr)", exitUsage))
		slices.Sort(codes) // by code: each starts with its single digit
		fmt.Fprintf(w, "\nExit codes:\n")
		for _, c := range codes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
}

// parseFlags parses args, returning exit code 2 on a usage error (0 for
// -h) and ok=false when the command must stop.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

// parseInterspersed is parseFlags for a command with positional
// arguments: flags may come before or after them ("custody verify
// receipt.json --log DIR"), and "--" ends the flags, so that everything
// after it is positional even if it starts with "-". It returns the
// positional arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if code, ok := parseFlags(fs, args); !ok {
			return nil, code, false
		}
		consumed := len(args) - fs.NArg()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, fs.Args()...), exitOK, true
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, exitOK, true
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "custody: "+format+"\n", args...)
	return exitUsage
}
