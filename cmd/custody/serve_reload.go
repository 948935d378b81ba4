//go:build unix

package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"syscall"

	"github.com/custody-gateway/custody/config"
)

// reloadOnHUP reloads the config file on SIGHUP: a valid file replaces
// the gateway (tenants, keys, providers, models, policies, limits) for new
// requests while requests in flight finish on the old one; a bad file, or
// one that changes what cannot change while running (listen, data_dir,
// index, ledger), keeps the old config and says why.
func (a *app) reloadOnHUP(path, listen string, logger *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-hup:
				if err := a.reload(path, listen); err != nil {
					logger.Error("config reload refused; the old config stays in force", "file", path, "err", err.Error())
				} else {
					logger.Info("config reloaded", "file", path)
				}
			case <-done:
				return
			}
		}
	}()
	// stop waits for a reload in progress: what it opened (a simulator
	// of a new provider) must be among the app's closers before close
	// reads them.
	return func() { signal.Stop(hup); close(done); <-exited }
}

func (a *app) reload(path, listen string) error {
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	if listen != "" {
		cfg.Listen = listen
	}
	old := a.cfg
	var fixed []string
	if cfg.Listen != old.Listen {
		fixed = append(fixed, "listen")
	}
	if cfg.DataDir != old.DataDir {
		fixed = append(fixed, "data_dir")
	}
	if cfg.Index != old.Index {
		fixed = append(fixed, "index")
	}
	if !reflect.DeepEqual(cfg.Ledger, old.Ledger) {
		fixed = append(fixed, "ledger")
	}
	if len(fixed) > 0 {
		return fmt.Errorf("%s cannot change while running (restart instead)", strings.Join(fixed, ", "))
	}
	if len(cfg.AdminKeys) == 0 && len(cfg.AdminKeySHA256) == 0 {
		cfg.AdminKeys = old.AdminKeys // the generated key
	}
	b, err := a.buildGateway(cfg)
	if err != nil {
		return err
	}
	if err := recordConfig(a.log, cfg, "reload"); err != nil {
		b.abandon()
		return err
	}
	a.cfg = cfg
	a.commit(b)
	return nil
}
