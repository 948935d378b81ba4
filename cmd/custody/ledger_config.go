//go:build unix

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/custody-gateway/custody/config"
	"github.com/custody-gateway/custody/ledger"
)

// recordConfig appends the config leaf of cfg (the rules about to be in
// force) and returns once it is durable. serve refuses to start, and a
// reload is refused, when it fails: rules not in the log are not applied.
func recordConfig(l *ledger.Log, cfg *config.Config, reason string) error {
	digest, policies, err := cfg.Record()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.AppendConfig(ctx, ledger.ConfigRecord{Reason: reason, Version: version, Digest: digest, Policies: policies}); err != nil {
		return fmt.Errorf("recording the config in the ledger: %w", err)
	}
	return nil
}

// ledgerWitnesses converts ledger.witnesses for the ledger.
func ledgerWitnesses(cfg *config.Config) []ledger.Witness {
	var ws []ledger.Witness
	for _, w := range cfg.Ledger.Witnesses {
		ws = append(ws, ledger.Witness{Name: w.Name, VKey: w.VKey, URL: w.URL})
	}
	return ws
}

// witnessCollector exports the witnesses' state: custody_witness_up
// {witness} (1 taking part, 0 not) and custody_ledger_unpublished_leaves
// (leaves in the tree that no published checkpoint covers yet: it grows
// while the witness quorum does not answer).
type witnessCollector struct {
	log        *ledger.Log
	up, behind *prometheus.Desc
}

func newWitnessCollector(l *ledger.Log) *witnessCollector {
	return &witnessCollector{log: l,
		up:     prometheus.NewDesc("custody_witness_up", "1 when the witness's last answer was a cosignature or a size it resolves, 0 when it fails.", []string{"witness"}, nil),
		behind: prometheus.NewDesc("custody_ledger_unpublished_leaves", "Leaves in the log that no published checkpoint covers yet.", nil, nil)}
}

func (c *witnessCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.up; ch <- c.behind }

func (c *witnessCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.log.Witnesses() {
		v := 0.0
		if s.Up || s.LastError == "" {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, v, s.Name)
	}
	ch <- prometheus.MustNewConstMetric(c.behind, prometheus.GaugeValue, float64(c.log.Unpublished(context.Background())))
}
