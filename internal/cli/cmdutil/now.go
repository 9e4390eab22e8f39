package cmdutil

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// NowFlag is --now: the moment AGE, LAST SEEN and the other durations are
// measured from. Unset, it is the wall clock, so that output pinned
// by a given moment is reproducible while the default reads like kubectl's.
type NowFlag struct {
	t   time.Time
	set bool
}

func (f *NowFlag) String() string {
	if !f.set {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *NowFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2026-11-06T21:20:40Z: %w", err)
	}
	f.t, f.set = t, true
	return nil
}

func (f *NowFlag) Type() string { return "time" }

// AddNowFlag registers --now.
func AddNowFlag(fs *pflag.FlagSet, f *NowFlag) {
	fs.Var(f, "now", "The moment ages (AGE, LAST SEEN) are measured from, in RFC 3339 (default: the current time)")
}

// Or is the flag's time, else the clock's.
func (f *NowFlag) Or(clock func() time.Time) time.Time {
	if f.set {
		return f.t
	}
	return clock()
}
