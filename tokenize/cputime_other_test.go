//go:build !unix

package tokenize

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
