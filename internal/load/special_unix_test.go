//go:build unix

package load

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs Load and fails the test if it does not return in time: a
// reader that opens a FIFO with no writer blocks for ever.
func loadWithin(t *testing.T, opts Options) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Load(opts)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked")
		return nil
	}
}

func TestSpecialFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	inDir := filepath.Join(dir, "manifests")
	if err := os.Mkdir(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inDir, "a-ns.yaml"), []byte(namespaceDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(inDir, "b-pipe.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	zeroLink := filepath.Join(dir, "zero-link")
	if err := os.Mkdir(zeroLink, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(zeroLink, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	// A socket path must be short; the temporary directory may be long.
	sockDir, err := os.MkdirTemp("", "sk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s.yaml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	t.Cleanup(func() { l.Close() })

	tests := []struct {
		name string
		file string
		want string
	}{
		{
			name: "a named pipe given with -f is refused",
			file: fifo,
			want: fifo + ": not a regular file but a named pipe (FIFO); -f takes a regular file, a directory or - for stdin",
		},
		{
			name: "a named pipe named like a manifest in a directory is refused",
			file: inDir,
			want: filepath.Join(inDir, "b-pipe.yaml") + ": not a regular file but a named pipe (FIFO); a directory is read for its regular files only",
		},
		{
			name: "/dev/zero given with -f is refused",
			file: "/dev/zero",
			want: "/dev/zero: not a regular file but a character device; -f takes a regular file, a directory or - for stdin",
		},
		{
			name: "a link to /dev/zero in a directory is refused",
			file: zeroLink,
			want: filepath.Join(zeroLink, "zero.yaml") + ": not a regular file but a character device; a directory is read for its regular files only",
		},
		{
			name: "a socket named like a manifest in a directory is refused",
			file: sockDir,
			want: sock + ": not a regular file but a socket; a directory is read for its regular files only",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := loadWithin(t, Options{Filenames: []string{tt.file}})
			if err == nil || err.Error() != tt.want || !IsBadInput(err) {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestALinkToARegularFileInADirectoryIsRead(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "ns.txt")
	if err := os.WriteFile(target, []byte(namespaceDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "m")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(sub, "ns.yaml")); err != nil {
		t.Fatal(err)
	}
	s, err := Load(Options{Filenames: []string{sub}})
	if err != nil || len(s.Objects) != 1 || s.Objects[0].Key.Name != "x" {
		t.Fatalf("%v", err)
	}
}

func TestStdinMayBeAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write([]byte(namespaceDoc))
		w.Close()
	}()
	defer r.Close()
	s, err := Load(Options{Filenames: []string{"-"}, Stdin: r})
	if err != nil || len(s.Objects) != 1 {
		t.Fatalf("%v", err)
	}
}
