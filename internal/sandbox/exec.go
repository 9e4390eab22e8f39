package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultStateDir holds one directory per prefix: the namespaces Up
// created (written before each is created), the servers' logs and the
// zone file.
const DefaultStateDir = "/run/kubectl-hybrid-sandbox"

// netnsDir is where ip netns keeps named namespaces.
const netnsDir = "/run/netns"

// Executor applies plans and removes what they created.
type Executor struct {
	// StateDir is DefaultStateDir unless set.
	StateDir string
	// Self is the kubectl-hybrid binary the servers run as (sandbox
	// serve); os.Executable when empty.
	Self string
	// Log, when set, gets each command as it runs.
	Log io.Writer
	// ReadyTimeout bounds the wait for the servers; 10 s when zero.
	ReadyTimeout time.Duration
}

func (x *Executor) dir(prefix string) string {
	d := x.StateDir
	if d == "" {
		d = DefaultStateDir
	}
	return filepath.Join(d, prefix)
}

// ErrUp is returned when a sandbox with the prefix is already up.
var ErrUp = errors.New("a sandbox with this prefix is up (or an up was interrupted): run sandbox down first")

// NamespacesAvailable says why network namespaces cannot be created here,
// or nil: it creates and removes one named <prefix>probe.
func NamespacesAvailable(prefix string) error {
	for _, tool := range []string{"ip", "bridge", "nft", "sysctl", "ping"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (packages iproute2, nftables, procps, iputils-ping)", tool)
		}
	}
	name := prefix + "probe"
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("cannot create a network namespace (root is needed): %s", strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	return nil
}

// Up creates everything the plan describes. Every namespace is recorded
// before it is created, so that Down removes it whatever happens after.
func (x *Executor) Up(p *Plan) error { return x.UpContext(context.Background(), p) }

// UpContext is Up that stops between two steps once ctx is done (an
// interrupt), returning ctx's error; Down then removes what was created.
func (x *Executor) UpContext(ctx context.Context, p *Plan) error {
	dir := x.dir(p.Prefix)
	if b, err := os.ReadFile(filepath.Join(dir, "namespaces")); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return ErrUp
	}
	if err := os.MkdirAll(filepath.Join(dir, "servers"), 0o755); err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	own := map[string]bool{}
	for _, n := range p.Namespaces {
		own[n.Name] = true
		if _, err := os.Stat(filepath.Join(netnsDir, n.Name)); err == nil {
			return fmt.Errorf("network namespace %s exists and is not this sandbox's: remove it or choose another --prefix", n.Name)
		}
	}
	rec, err := os.OpenFile(filepath.Join(dir, "namespaces"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	defer rec.Close()
	for _, s := range p.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		ns, ok := stepNamespace(s.Argv)
		if !ok || !own[ns] {
			return fmt.Errorf("refusing %q: it does not act inside a namespace of the sandbox", shellJoin(s.Argv))
		}
		if len(s.Argv) >= 4 && s.Argv[1] == "netns" && s.Argv[2] == "add" {
			if _, err := fmt.Fprintln(rec, ns); err != nil {
				return fmt.Errorf("sandbox state: %w", err)
			}
			if err := rec.Sync(); err != nil {
				return fmt.Errorf("sandbox state: %w", err)
			}
		}
		if err := x.run(s.Argv, s.Stdin); err != nil {
			if s.Why != "" {
				// What the step plays says what the host lacks.
				return fmt.Errorf("%w (the step plays %s)", err, s.Why)
			}
			return err
		}
	}
	return x.startServers(p, dir)
}

func (x *Executor) run(argv []string, stdin string) error {
	if x.Log != nil {
		fmt.Fprintln(x.Log, shellJoin(argv))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", shellJoin(argv), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// startServers starts one sandbox serve per server inside its namespace
// and waits until each says it listens.
func (x *Executor) startServers(p *Plan, dir string) error {
	if len(p.Servers) == 0 {
		return nil
	}
	self := x.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return fmt.Errorf("sandbox servers: %w", err)
		}
	}
	zone := filepath.Join(dir, "zone.json")
	b, err := json.Marshal(p.Zone)
	if err != nil {
		return err
	}
	if err := os.WriteFile(zone, b, 0o644); err != nil {
		return fmt.Errorf("sandbox state: %w", err)
	}
	var ready []string
	for _, s := range p.Servers {
		r := filepath.Join(dir, "servers", s.Namespace+".ready")
		ready = append(ready, r)
		log, err := os.Create(filepath.Join(dir, "servers", s.Namespace+".log"))
		if err != nil {
			return fmt.Errorf("sandbox state: %w", err)
		}
		argv := []string{"ip", "netns", "exec", s.Namespace, self, "sandbox", "serve", "--name", s.Name, "--ready", r}
		if len(s.TCP) > 0 {
			argv = append(argv, "--tcp", joinInts(s.TCP))
		}
		if len(s.UDP) > 0 {
			argv = append(argv, "--udp", joinInts(s.UDP))
		}
		if s.DNS {
			argv = append(argv, "--dns-zone", zone)
		}
		if x.Log != nil {
			fmt.Fprintln(x.Log, shellJoin(argv)+" &")
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		// Its own session: an interrupt of up does not reach it; down
		// ends it with its namespace.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			log.Close()
			return fmt.Errorf("sandbox server in %s: %w", s.Namespace, err)
		}
		log.Close()
		go func() { _ = cmd.Wait() }()
	}
	timeout := x.ReadyTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for _, r := range ready {
		for {
			if _, err := os.Stat(r); err == nil {
				break
			}
			if time.Now().After(deadline) {
				logf := strings.TrimSuffix(r, ".ready") + ".log"
				msg, _ := os.ReadFile(logf)
				return fmt.Errorf("sandbox server %s did not start: %s", filepath.Base(logf), strings.TrimSpace(string(msg)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Down removes every namespace Up recorded for the prefix (ending the
// processes inside them first) and the prefix's state. It returns the
// namespaces it removed.
func (x *Executor) Down(prefix string) ([]string, error) {
	dir := x.dir(prefix)
	f, err := os.Open(filepath.Join(dir, "namespaces"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, os.RemoveAll(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox state: %w", err)
	}
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" && strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	f.Close()
	var removed []string
	var errs []error
	for i := len(names) - 1; i >= 0; i-- {
		n := names[i]
		if _, err := os.Stat(filepath.Join(netnsDir, n)); err != nil {
			continue
		}
		if out, err := exec.Command("ip", "netns", "pids", n).Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err := x.run([]string{"ip", "netns", "del", n}, ""); err != nil {
			if _, serr := os.Stat(filepath.Join(netnsDir, n)); serr == nil {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, n)
	}
	if len(errs) > 0 {
		return removed, errors.Join(errs...)
	}
	return removed, os.RemoveAll(dir)
}
