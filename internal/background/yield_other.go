//go:build !linux

package background

import "runtime"

// Yield lets the goroutines that are runnable run before the caller goes
// on. (On Linux it also waits for the runtime to poll the network: see
// yield_linux.go.)
func Yield() { runtime.Gosched() }
