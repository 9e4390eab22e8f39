package serve

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// PollFiles calls changed whenever the files under paths (files, or
// directories walked recursively) change: a file added, removed, or with
// a new size or modification time. Polling needs no inotify and sees a
// ConfigMap volume's symlink swap as well as an editor's rename.
func PollFiles(ctx context.Context, paths []string, every time.Duration, changed, ready func()) error {
	if every <= 0 {
		every = time.Second
	}
	last := fingerprint(paths)
	ready()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if now := fingerprint(paths); now != last {
			last = now
			changed()
		}
	}
}

// fingerprint hashes the name, size and modification time of every
// regular file under paths; what cannot be read counts as its error.
func fingerprint(paths []string) [32]byte {
	h := sha256.New()
	for _, p := range paths {
		_ = filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(h, "%s\x00error %v\x00", name, err)
				return nil
			}
			// Stat follows links: a file swapped behind a link changes.
			fi, err := os.Stat(name)
			if err != nil {
				fmt.Fprintf(h, "%s\x00error %v\x00", name, err)
				return nil
			}
			if fi.Mode().IsRegular() {
				fmt.Fprintf(h, "%s\x00%d\x00%d\x00", name, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}
