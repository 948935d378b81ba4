package eval

import (
	"errors"
	"fmt"

	"github.com/custody-gateway/custody/config"
)

// Suites loads the config's suites, reporting every bad file or line at
// once, each under its key: "evals[0].file: FILE:LINE: reason".
func Suites(evals []config.Eval) ([]*Suite, error) {
	var out []*Suite
	var errs []error
	for i, e := range evals {
		cases, digest, err := Load(e.File)
		if err != nil {
			errs = append(errs, fmt.Errorf("evals[%d].file: %w", i, err))
			continue
		}
		s := &Suite{Name: e.Name, File: e.File, Digest: digest, Cases: cases, Routes: e.Routes, Interval: e.Interval, Rate: e.Rate, Threshold: 1,
			ContractPassRate: e.ContractPassRate}
		if e.Threshold != nil {
			s.Threshold = *e.Threshold
		}
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}
