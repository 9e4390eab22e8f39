package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// nowFlag is --now: the moment AGE, LAST SEEN and the other durations are
// measured from. Unset, it is the wall clock (clock), so that output pinned
// by a given moment is reproducible while the default reads like kubectl's.
type nowFlag struct {
	t   time.Time
	set bool
}

func (f *nowFlag) String() string {
	if !f.set {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *nowFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2026-11-06T21:20:40Z: %w", err)
	}
	f.t, f.set = t, true
	return nil
}

func (f *nowFlag) Type() string { return "time" }

// addNowFlag registers --now.
func addNowFlag(fs *pflag.FlagSet, f *nowFlag) {
	fs.Var(f, "now", "The moment ages (AGE, LAST SEEN) are measured from, in RFC 3339 (default: the current time)")
}

// or is the flag's time, else the clock's.
func (f *nowFlag) or(clock func() time.Time) time.Time {
	if f.set {
		return f.t
	}
	return clock()
}
