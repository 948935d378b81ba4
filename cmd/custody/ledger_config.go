//go:build unix

package main

import (
	"context"
	"fmt"
	"time"

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
