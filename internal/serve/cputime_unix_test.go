//go:build unix

package serve

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: unlike the
// wall clock it does not count the time other processes take on a shared
// machine (it does count the garbage collector's parallel workers).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
