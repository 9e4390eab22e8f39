//go:build !unix

package serve

import "time"

// cpuTime is not measured here; the benchmarks fall back to wall time.
func cpuTime() time.Duration { return 0 }
