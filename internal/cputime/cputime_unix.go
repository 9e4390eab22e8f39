//go:build unix

// Package cputime reads the process's CPU time for the benchmarks: unlike
// the wall clock it does not count the time other processes take on a
// shared machine (it does count the garbage collector's parallel workers).
package cputime

import (
	"syscall"
	"time"
)

// Now is the process's user and system CPU time so far; 0 when it cannot
// be read.
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
