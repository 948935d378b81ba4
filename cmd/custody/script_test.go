package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/custody-gateway/custody/ledger"
	"github.com/custody-gateway/custody/ledger/ledgertest"
	"github.com/rogpeppe/go-internal/testscript"
	"k8s.io/klog/v2"
)

// TestScript runs the scripts in testdata/script: the command line's
// behaviour and exit codes, as a user sees them, one file a command.
//
// `custody` in a script is the real binary, built by TestMain: its main,
// its flags, its exit codes. (testscript.Main would run main in the test
// binary instead, but it needs TestMain, which main_test.go already has
// for the integration tests; PATH does the same job.) The commands below
// are the scripts' own, in Go:
//
//	exits CODE PROG [ARGS...]   run PROG, which must exit with CODE; stdout and stderr are kept for checks
//	mklog [-keys DIR] DIR [N]   append N (3) transactions to the ledger in DIR (created if need be) and close it;
//	                            write receipt.json (the last one, with its inclusion proof), request.json,
//	                            response.sse and vkey, and set $VKEY; -keys: sign with DIR's keys, and make
//	                            the first leaf differ from an honest log's (a rewritten history)
//	tamper FILE [OFFSET]        flip the low bit of a byte of FILE (default: the middle one)
//	tear DIR                    write the start of a record where the journal of the stopped ledger in DIR
//	                            ends, as a crash mid-write leaves it
//	replace FILE OLD NEW        replace the first OLD in FILE by NEW
func TestScript(t *testing.T) {
	// mklog runs tessera in this process; main silences its klog too.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	// Each script has a work dir of its own and serves on :0; klog is set
	// above, before the test waits for the sequential ones to finish.
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(binary)+string(os.PathListSeparator)+env.Getenv("PATH"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":   cmdExits,
			"mklog":   cmdMklog,
			"tamper":  cmdTamper,
			"tear":    cmdTear,
			"replace": cmdReplace,
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	var exitErr *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &exitErr):
		got = exitErr.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func cmdMklog(ts *testscript.TestScript, neg bool, args []string) {
	fs := flag.NewFlagSet("mklog", flag.ContinueOnError)
	keys := fs.String("keys", "", "")
	if neg || fs.Parse(args) != nil || fs.NArg() < 1 || fs.NArg() > 2 {
		ts.Fatalf("usage: mklog [-keys DIR] DIR [N]")
	}
	dir, n := ts.MkAbs(fs.Arg(0)), 3
	if fs.NArg() == 2 {
		var err error
		n, err = strconv.Atoi(fs.Arg(1))
		ts.Check(err)
	}
	ctx := context.Background()
	ts.Check(os.MkdirAll(dir, 0o700))
	if *keys != "" {
		ts.Check(ledgertest.CopyKeys(ts.MkAbs(*keys), dir))
	}
	l, err := ledgertest.Open(ctx, dir)
	ts.Check(err)
	defer l.Close(ctx)
	if *keys != "" {
		_, err := l.Append(ctx, ledgertest.SampleTx(l, "rewritten", nil, nil))
		ts.Check(err)
		n--
	}
	samples, err := ledgertest.Append(ctx, l, n)
	ts.Check(err)
	last := samples[len(samples)-1]
	r, err := ledgertest.Integrated(ctx, l, last.Receipt.Index, last.Receipt.RequestID)
	ts.Check(err)
	b, err := r.Marshal()
	ts.Check(err)
	write := func(name string, data []byte) { ts.Check(os.WriteFile(ts.MkAbs(name), data, 0o644)) }
	write("receipt.json", append(b, '\n'))
	write("request.json", last.Request)
	write("response.sse", last.Response)
	write("vkey", []byte(l.VerifierKey()+"\n"))
	ts.Setenv("VKEY", l.VerifierKey())
	ts.Check(l.Close(ctx)) // the deferred Close is then a no-op
}

func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: tamper FILE [OFFSET]")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	if len(b) == 0 {
		ts.Fatalf("%s is empty", args[0])
	}
	off := len(b) / 2
	if len(args) == 2 {
		off, err = strconv.Atoi(args[1])
		ts.Check(err)
	}
	b[off] ^= 1
	ts.Check(os.WriteFile(p, b, 0o644))
}

func cmdTear(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tear DIR")
	}
	rep, err := ledger.CheckJournal(ts.MkAbs(args[0]))
	ts.Check(err)
	if rep.Tail == "" || rep.Damage != nil {
		ts.Fatalf("tear: the journal has no segment, or is damaged already: %+v", rep)
	}
	f, err := os.OpenFile(rep.Tail, os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteAt([]byte{0, 0, 0, 9, 1, 2, 3}, rep.End)
	ts.Check(errors.Join(err, f.Close()))
}

func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	if !bytes.Contains(b, []byte(args[1])) {
		ts.Fatalf("%s does not contain %q", args[0], args[1])
	}
	ts.Check(os.WriteFile(p, bytes.Replace(b, []byte(args[1]), []byte(args[2]), 1), 0o644))
}
