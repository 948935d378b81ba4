package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// flagLine is how flag.PrintDefaults starts the line of each flag.
var flagLine = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)

// helpFlags runs `custody name --help` and returns its exit code and the
// flags it lists.
func helpFlags(t *testing.T, args ...string) (int, []string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	help := out.String() + errb.String()
	var flags []string
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		flags = append(flags, m[1])
	}
	return code, flags, help
}

// TestUsageHelpForEveryCommand: -h, --help and `custody help NAME` exit 0
// for every command and list its flags, and the top-level usage names
// every command with every one of its flags.
func TestUsageHelpForEveryCommand(t *testing.T) {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(usage, "custody "+name) {
				t.Errorf("the usage does not list %q", name)
			}
			code, flags, help := helpFlags(t, name, "--help")
			if code != exitOK {
				t.Fatalf("custody %s --help: exit %d\n%s", name, code, help)
			}
			for _, f := range flags {
				if !strings.Contains(usage, "--"+f+" ") && !strings.Contains(usage, "--"+f+"]") {
					t.Errorf("the usage does not list %s's flag --%s", name, f)
				}
			}
			for _, args := range [][]string{{name, "-h"}, {"help", name}} {
				code, again, _ := helpFlags(t, args...)
				if code != exitOK || !slices.Equal(again, flags) {
					t.Errorf("custody %q: exit %d, flags %q, want 0 and %q", args, code, again, flags)
				}
			}
		})
	}
	// A command with flags lists them: the check above is not vacuous.
	if _, flags, _ := helpFlags(t, "verify", "--help"); !slices.Equal(flags, []string{"export", "key", "log", "offline", "request", "response", "wait", "witness-key", "witness-quorum"}) {
		t.Errorf("custody verify --help lists %q", flags)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"bogus"},
		{"help", "bogus"},
		{"version", "extra"},
		{"version", "--nope"},
		{"verify"},
		{"verify", "--nope", "r.json"},
		{"audit"},
		{"audit", "extra"},
		{"sim", "extra"},
		{"serve", "--nope"},
		{"canary", "--nope"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitUsage || errb.Len() == 0 {
			t.Errorf("custody %q: exit %d, stderr %q; want 2 and a reason", args, code, errb.String())
		}
	}
}

// TestUsageUnixOnlyStub: where serve and canary do not exist (Windows),
// they say so and exit 1; their --help still exits 0.
func TestUsageUnixOnlyStub(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{nil, exitFailed, "custody serve runs on unix systems\n"},
		{[]string{"--config", "x.yaml"}, exitFailed, "custody serve runs on unix systems\n"},
		{[]string{"--help"}, exitOK, "custody serve runs on unix systems; 'custody help' lists its flags\n"},
		{[]string{"-h"}, exitOK, "custody serve runs on unix systems; 'custody help' lists its flags\n"},
	} {
		var out, errb bytes.Buffer
		code := unixOnly("serve")(context.Background(), tc.args, &out, &errb)
		if code != tc.code || out.String()+errb.String() != tc.out {
			t.Errorf("stub serve %q: exit %d, output %q; want %d, %q", tc.args, code, out.String()+errb.String(), tc.code, tc.out)
		}
	}
}
