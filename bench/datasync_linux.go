package main

import (
	"os"
	"syscall"
)

// datasync is fdatasync(2), as the journal's commit calls it.
func datasync(f *os.File) error {
	for {
		if err := syscall.Fdatasync(int(f.Fd())); err != syscall.EINTR {
			return err
		}
	}
}
