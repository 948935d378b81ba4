//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/custody-gateway/custody/ledger"
)

// runLedger is `custody ledger check|repair [--data DIR]`: it reads (and
// repair cuts) the journal of a stopped gateway's ledger, in
// DIR/ledger/journal. DIR is the config's data_dir.
func runLedger(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("ledger", stderr)
	data := fs.String("data", "./custody-data", "the gateway's data_dir `DIR` (its ledger is DIR/ledger); stop the gateway first")
	withSynopsis(fs, "custody ledger check|repair [--data DIR]",
		"check reports whether the ledger's journal is intact: exit 0 intact (or a torn tail, which serve cuts\n"+
			"by itself), 1 corrupt. repair cuts a corrupt journal at its first bad record, after saying how many\n"+
			"records after it are lost and which of them the log already holds.",
		"0  check: intact, or a torn tail; repair: repaired, or nothing to repair",
		"1  check: corrupt (where, and what to do); repair: could not repair")
	var action string
	if len(args) > 0 && (args[0] == "check" || args[0] == "repair") {
		action, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if action == "" || fs.NArg() > 0 {
		return usageError(stderr, "ledger takes check or repair, then only --data DIR; got %q", append([]string{action}, fs.Args()...))
	}
	dir := filepath.Join(*data, "ledger")
	rep, err := ledger.CheckJournal(dir)
	if err != nil {
		fmt.Fprintf(stderr, "custody: checking the journal in %s: %v\n", dir, err)
		return exitFailed
	}
	d := rep.Damage
	switch {
	case d == nil:
		fmt.Fprintf(stdout, "intact: %d records in %d segments; the log's checkpoint holds %d leaves\n", rep.Records, rep.Segments, rep.LogSize)
		return exitOK
	case d.Torn:
		fmt.Fprintf(stdout, "torn tail: segment %s ends in a partly written record at offset %d (record %d), a write a crash interrupted and never acknowledged; custody serve truncates it on start\n",
			d.Segment, d.Offset, d.Index)
		return exitOK
	}
	fmt.Fprintf(stdout, "corrupt: segment %s at offset %d (record %d)\n", d.Segment, d.Offset, d.Index)
	describeLoss(stdout, d, rep.LogSize)
	if action == "check" {
		fmt.Fprintf(stdout, "custody serve refuses to start. Restore the journal from a backup, or run `custody ledger repair --data %s` to cut it at offset %d\n", *data, d.Offset)
		return exitFailed
	}
	if err := ledger.RepairJournal(dir, d); err != nil {
		fmt.Fprintf(stderr, "custody: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "repaired: %s cut at offset %d; the next transaction is recorded after the log's last leaf\n", d.Segment, d.Offset)
	return exitOK
}

// describeLoss says what cutting the journal at d loses: the bad record
// and the intact ones after it, split into those the log already holds
// (nothing lost) and those it does not (acknowledged transactions whose
// receipts will not verify).
func describeLoss(w io.Writer, d *ledger.Damage, logSize uint64) {
	lost := append([]uint64{d.Index}, d.After...)
	var inLog, notInLog []uint64
	for _, i := range lost {
		if i < logSize {
			inLog = append(inLog, i)
		} else {
			notInLog = append(notInLog, i)
		}
	}
	fmt.Fprintf(w, "cutting the journal there drops the bad record and the %d intact records after it:\n", len(d.After))
	fmt.Fprintf(w, "  %d already in the log (its checkpoint holds %d leaves), so nothing of them is lost: %s\n", len(inLog), logSize, ranges(inLog))
	fmt.Fprintf(w, "  %d NOT in the log: acknowledged transactions lost for good, whose receipts will not verify: %s\n", len(notInLog), ranges(notInLog))
}

// ranges writes ascending indices as "3-7, 9".
func ranges(xs []uint64) string {
	if len(xs) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if i == j {
			fmt.Fprintf(&b, "%d", xs[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", xs[i], xs[j])
		}
		i = j + 1
	}
	return b.String()
}

// corruptJournalAdvice is what serve says when the ledger refuses a
// corrupt journal.
func corruptJournalAdvice(err error, dataDir string) string {
	if !errors.Is(err, ledger.ErrCorruptJournal) {
		return ""
	}
	return fmt.Sprintf("\nStop here: the records after the damage may be acknowledged transactions the log does not hold yet.\n"+
		"Restore the journal from a backup, or run `custody ledger check --data %s` to see which records are affected\n"+
		"and `custody ledger repair --data %s` to cut the journal at the damage (it says what that loses first).", dataDir, dataDir)
}

// tamperedAdvice is what serve says when the ledger refuses a stored log
// that differs from what it signed (ledger.ErrTampered).
func tamperedAdvice(err error, dataDir string) string {
	if !errors.Is(err, ledger.ErrTampered) {
		return ""
	}
	logDir := filepath.Join(dataDir, "ledger", "log")
	return fmt.Sprintf("\nStop here: custody signs no checkpoint over a log that differs from the one it signed (it would\n"+
		"certify the rewritten leaves to every verifier from then on). Run `custody audit --log %s`\n"+
		"(with --key, the pinned verifier key, and --state, your last audit's state, if you keep one) to see\n"+
		"what the stored files hold. Then restore %s from a backup, or from the tiles and entries under a\n"+
		"witness-cosigned checkpoint, until that audit is clean, and start again.", logDir, filepath.Join(dataDir, "ledger"))
}
