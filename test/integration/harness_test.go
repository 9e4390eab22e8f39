package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// The binaries the tests run: kube-apiserver, kube-scheduler and etcd built
// from the Go module proxy at the versions test/go.mod pins, kept in a cache outside the
// checkout, and kubectl-hybrid built from this checkout.

// cacheDir is ${KUBECTL_HYBRID_CACHE:-$HOME/.cache/kubectl-hybrid}.
func cacheDir() string {
	if d := os.Getenv("KUBECTL_HYBRID_CACHE"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "kubectl-hybrid")
	}
	return filepath.Join(os.TempDir(), "kubectl-hybrid-cache")
}

// testModuleDir is test/, the module whose go.mod pins the versions.
func testModuleDir() string {
	wd, _ := os.Getwd() // test/integration
	return filepath.Dir(wd)
}

// moduleVersion is the version of mod in test/go.mod's build list.
func moduleVersion(mod string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod)
	cmd.Dir = testModuleDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v: %s", mod, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// cachedBinary returns the path of name at version, building pkg with
// ldflags in test/ on a cache miss. The key holds the version, the Go
// version and the platform; a lock file keeps two runs from building at
// once.
func cachedBinary(name, pkg, version, ldflags string) (string, error) {
	dir := filepath.Join(cacheDir(), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%s-%s-%s", name, version, runtime.Version(), runtime.GOOS, runtime.GOARCH))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(path); err == nil {
		return path, nil // another run built it while we waited
	}
	logf("building %s %s from the Go module proxy into %s (first run only; this takes minutes)", name, version, dir)
	start := time.Now()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", path+".tmp", pkg)
	cmd.Dir = testModuleDir()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return "", err
	}
	logf("built %s %s in %s", name, version, time.Since(start).Round(time.Second))
	return path, nil
}

// binaries are the paths of the programs the tests run.
type binaries struct {
	apiserver, scheduler, etcd, hybrid string
	apiserverVersion                   string
}

func buildBinaries(tmp string) (*binaries, error) {
	var b binaries
	kv, err := moduleVersion("k8s.io/kubernetes")
	if err != nil {
		return nil, err
	}
	ev, err := moduleVersion("go.etcd.io/etcd/server/v3")
	if err != nil {
		return nil, err
	}
	b.apiserverVersion = kv
	major, minor, _ := strings.Cut(strings.TrimPrefix(kv, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	v := "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean", v, kv, v, major, v, minor, v)
	if b.apiserver, err = cachedBinary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", kv, ldflags); err != nil {
		return nil, err
	}
	if b.scheduler, err = cachedBinary("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", kv, ldflags); err != nil {
		return nil, err
	}
	if b.etcd, err = cachedBinary("etcd", "go.etcd.io/etcd/server/v3", ev, "-s -w"); err != nil {
		return nil, err
	}
	if bin := os.Getenv("KUBECTL_HYBRID_BIN"); bin != "" {
		b.hybrid = bin
		return &b, nil
	}
	b.hybrid = filepath.Join(tmp, "kubectl-hybrid")
	cmd := exec.Command("go", "build", "-o", b.hybrid, "./cmd/kubectl-hybrid")
	cmd.Dir = filepath.Dir(testModuleDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building kubectl-hybrid: %v\n%s", err, out)
	}
	return &b, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "integration: "+format+"\n", args...)
}

// process is a server the harness started.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(name, logPath, bin string, args ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process: SIGTERM, then SIGKILL after 10 s.
func (p *process) stop() {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process at once, as a crash or a power cut would.
func (p *process) kill() {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cluster is an etcd and a kube-apiserver on loopback ports, set up the way
// kubeadm sets up a control plane where it matters here: RBAC and Node
// authorization, privileged pods allowed, NodeRestriction, a service
// account issuer with keys made for the run, the lab's service range.
type cluster struct {
	name      string
	dir       string
	bins      *binaries
	etcd      *process
	apiserver *process
	etcdURL   string
	URL       string
	CAFile    string
	AuditLog  string

	// Tokens of static users, all in system:masters: loader is the
	// harness's own client, admin is what kubectl-hybrid runs as.
	loaderToken, adminToken string
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
`

func startCluster(name string, bins *binaries, etcdURL string) (*cluster, error) {
	dir, err := os.MkdirTemp("", "kubectl-hybrid-it-"+name+"-")
	if err != nil {
		return nil, err
	}
	c := &cluster{name: name, dir: dir, bins: bins, loaderToken: randomToken(), adminToken: randomToken()}
	c.AuditLog = filepath.Join(dir, "audit.log")
	if etcdURL == "" {
		if err := c.startEtcd(); err != nil {
			c.stop()
			return nil, err
		}
	} else {
		c.etcdURL = etcdURL
	}
	if err := c.startAPIServer(); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) startEtcd() error {
	client, err := freePort()
	if err != nil {
		return err
	}
	peer, err := freePort()
	if err != nil {
		return err
	}
	c.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	c.etcd, err = startProcess("etcd", filepath.Join(c.dir, "etcd.log"), c.bins.etcd,
		"--name=default",
		"--data-dir="+filepath.Join(c.dir, "etcd"),
		"--listen-client-urls="+c.etcdURL,
		"--advertise-client-urls="+c.etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--unsafe-no-fsync", // a test's data need not survive a crash
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	return waitFor(c.etcd, time.Minute, func() bool {
		resp, err := http.Get(c.etcdURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (c *cluster) startAPIServer() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"sa.key":       pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub":       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"tokens.csv":   fmt.Appendf(nil, "%s,loader,loader-uid,\"system:masters\"\n%s,admin,admin-uid,\"system:masters\"\n", c.loaderToken, c.adminToken),
		"audit-policy": []byte(auditPolicy),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(c.dir, name), data, 0o600); err != nil {
			return err
		}
	}
	certDir := filepath.Join(c.dir, "certs")
	c.CAFile = filepath.Join(certDir, "apiserver.crt")
	c.apiserver, err = startProcess("kube-apiserver", filepath.Join(c.dir, "kube-apiserver.log"), c.bins.apiserver,
		"--etcd-servers="+c.etcdURL,
		"--etcd-prefix=/"+c.name,
		fmt.Sprintf("--secure-port=%d", port),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--cert-dir="+certDir,
		"--service-cluster-ip-range=10.96.0.0/12",
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(c.dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(c.dir, "sa.key"),
		"--token-auth-file="+filepath.Join(c.dir, "tokens.csv"),
		"--audit-log-path="+c.AuditLog,
		"--audit-policy-file="+filepath.Join(c.dir, "audit-policy"),
		// The lab's default/kubernetes EndpointSlice names its control
		// plane, 192.168.10.23:6443; the reconciler would replace it with
		// this server's loopback address.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	return waitFor(c.apiserver, 2*time.Minute, func() bool {
		req, _ := http.NewRequest("GET", c.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+c.loaderToken)
		resp, err := insecure.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func waitFor(p *process, limit time.Duration, ready func() bool) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited: %v\n%s", p.name, p.err, p.tail())
		}
		if ready() {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s\n%s", p.name, limit, p.tail())
}

func (c *cluster) stop() {
	if c == nil {
		return
	}
	c.apiserver.stop()
	c.etcd.stop()
	if os.Getenv("KUBECTL_HYBRID_KEEP") == "" {
		os.RemoveAll(c.dir)
	} else {
		logf("kept %s", c.dir)
	}
}

// restConfig is a client config for a bearer token.
func (c *cluster) restConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.CAFile},
		QPS:             200,
		Burst:           400,
	}
}

// loader is the harness's own client.
func (c *cluster) loader() *rest.Config { return c.restConfig(c.loaderToken) }

// kubeconfig writes a kubeconfig for token and returns its path.
func (c *cluster) kubeconfig(name, token string) string {
	path := filepath.Join(c.dir, name+".kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: %[1]s
    cluster:
      server: %[2]s
      certificate-authority: %[3]s
users:
  - name: %[4]s
    user:
      token: %[5]s
contexts:
  - name: %[1]s
    context: {cluster: %[1]s, user: %[4]s}
current-context: %[1]s
`, c.name, c.URL, c.CAFile, name, token)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		panic(err)
	}
	return path
}

// result is one run of kubectl-hybrid.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// hybrid runs kubectl-hybrid with args and no kubeconfig but the one args
// name (KUBECONFIG points nowhere).
func hybrid(ctx context.Context, args ...string) result {
	cmd := exec.CommandContext(ctx, env.bins.hybrid, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(env.tmp, "no-such-kubeconfig"), "HOME="+env.tmp)
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// environment is what TestMain sets up once for every test.
type environment struct {
	tmp  string
	bins *binaries
	// lab is the cluster loaded with the lab.
	lab *cluster
	// admin and reader are kubeconfigs for the lab cluster: a
	// system:masters user, and the ServiceAccount deploy/rbac.yaml binds.
	admin, reader string
	// extras is a file of the objects the lab cluster has that the lab
	// does not (see loadLab).
	extras string

	mu   sync.Mutex
	big  *cluster // 20,000 pods, started on first use
	bigE error
}

var env *environment

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "kubectl-hybrid-it-")
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	env = &environment{tmp: tmp}
	if env.bins, err = buildBinaries(tmp); err != nil {
		logf("%v", err)
		return 1
	}
	logf("binaries ready in %s", time.Since(start).Round(time.Millisecond))
	t0 := time.Now()
	if env.lab, err = startCluster("lab", env.bins, ""); err != nil {
		logf("%v", err)
		return 1
	}
	defer env.lab.stop()
	logf("etcd and kube-apiserver %s ready at %s in %s", env.bins.apiserverVersion, env.lab.URL, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if err := setUpLab(context.Background()); err != nil {
		logf("loading the lab: %v", err)
		return 1
	}
	logf("lab loaded in %s", time.Since(t0).Round(time.Millisecond))
	defer func() {
		env.mu.Lock()
		defer env.mu.Unlock()
		env.big.stop()
	}()
	return m.Run()
}
