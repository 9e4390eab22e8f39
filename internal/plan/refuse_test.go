package plan

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func ids(fs []Finding) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f.ID)
		}
	}
	sort.Strings(out)
	return out
}

func TestAClusterThatCannotTakeWindowsNodesIsRefused(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		lab   bool
		nodes []NodeRequest
		want  []string
	}{
		{"the main cluster: BGP, CrossSubnet and strictAffinity off", []string{"../../examples/main-cluster"}, false,
			[]NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40"}}, []string{"HYB001", "HYB002", "HYB003"}},
		{"the lab with strictAffinity off", []string{labBefore, "../../examples/what-if/no-strict-affinity.yaml"}, false,
			[]NodeRequest{{Name: "k8s-lab-win-1", Address: "192.168.10.25"}}, []string{"HYB003"}},
		{"an unsupported Windows build", []string{labBefore}, false,
			[]NodeRequest{{Name: "k8s-lab-win-1", Address: "192.168.10.25", WindowsBuild: "10.0.17763"}}, []string{"PLAN004"}},
		{"a node already in the cluster", nil, true,
			[]NodeRequest{{Name: "k8s-lab-win-1", Address: "192.168.10.30"}}, []string{"PLAN005"}},
		{"an address a node has", []string{labBefore}, false,
			[]NodeRequest{{Name: "k8s-lab-win-2", Address: "192.168.10.24"}}, []string{"PLAN005"}},
		{"more Windows nodes than free blocks", []string{labBefore, "testdata/small-pool.yaml"}, false,
			[]NodeRequest{{Name: "w1", Address: "192.168.10.31"}, {Name: "w2", Address: "192.168.10.32"}}, []string{"PLAN003"}},
		{"an IPv6-only pool", []string{labBefore, "testdata/ipv6-pool.yaml"}, false,
			[]NodeRequest{{Name: "w1", Address: "192.168.10.31"}}, []string{"PLAN002"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Compute(input(t, tc.lab, tc.files...), Request{Nodes: tc.nodes})
			if err != nil {
				t.Fatal(err)
			}
			if !b.Refused || len(b.Nodes) != 0 || len(b.Steps) != 0 || len(b.Cluster) != 0 {
				t.Fatalf("not refused, or refused with a bundle: %+v", b)
			}
			got := ids(b.Findings)
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("findings %v lack %s", got, w)
				}
			}
			for _, f := range b.Findings {
				if !f.Blocking || f.WayOut == "" {
					t.Errorf("finding %+v is not blocking or has no way out", f)
				}
			}
		})
	}
}

func TestTheMainClustersRefusalPointsToAMigration(t *testing.T) {
	b, err := Compute(input(t, false, "../../examples/main-cluster"), Request{Nodes: []NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Findings {
		if (f.ID == "HYB001" || f.ID == "HYB002" || f.ID == "HYB003") && !strings.Contains(f.WayOut, "plan migrate") {
			t.Errorf("%s: way out %q does not name plan migrate", f.ID, f.WayOut)
		}
	}
}

func TestBadRequestsAreRefusedAsUsage(t *testing.T) {
	cases := []struct {
		name  string
		nodes []NodeRequest
	}{
		{"no node", nil},
		{"a name that is not DNS-1123", []NodeRequest{{Name: "Win_1", Address: "10.0.0.1"}}},
		{"an address that is not IPv4", []NodeRequest{{Name: "w1", Address: "fe80::1"}}},
		{"a node given twice", []NodeRequest{{Name: "w1", Address: "10.0.0.1"}, {Name: "w1", Address: "10.0.0.2"}}},
		{"an address given twice", []NodeRequest{{Name: "w1", Address: "10.0.0.1"}, {Name: "w2", Address: "10.0.0.1"}}},
		{"a build that is not a Windows build", []NodeRequest{{Name: "w1", Address: "10.0.0.1", WindowsBuild: "2025"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidateRequest(Request{Nodes: tc.nodes}); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// A cluster-info ConfigMap with a CA gives kubeadm's hash: SHA-256 of the
// certificate's SubjectPublicKeyInfo, computed here with crypto/x509 alone.
func TestTheCAHashComesFromClusterInfo(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	want := "sha256:" + hex.EncodeToString(sum[:])
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: https://10.9.9.9:6443\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(pemData) + "\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-info\n  namespace: kube-public\ndata:\n  kubeconfig: |\n"
	for _, l := range strings.Split(strings.TrimSuffix(kubeconfig, "\n"), "\n") {
		cm += "    " + l + "\n"
	}
	file := filepath.Join(t.TempDir(), "cluster-info.yaml")
	if err := os.WriteFile(file, []byte(cm), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Compute(input(t, false, labBefore, file), labRequest)
	if err != nil {
		t.Fatal(err)
	}
	if b.Inputs.CAHash != want {
		t.Errorf("CA hash %s, want %s", b.Inputs.CAHash, want)
	}
	// controlPlaneEndpoint still wins over cluster-info's server.
	if b.Inputs.Endpoint != "k8s-lab-api.example.com:6443" {
		t.Errorf("endpoint %s", b.Inputs.Endpoint)
	}
}

func TestANodeOutsideTheNodeNetworkIsWarnedAbout(t *testing.T) {
	b, err := Compute(input(t, false, labBefore), Request{Nodes: []NodeRequest{{Name: "w1", Address: "10.1.0.5", CPU: "4", Memory: "8Gi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Refused || len(b.Findings) != 1 || b.Findings[0].ID != "PLAN006" || b.Findings[0].Blocking {
		t.Errorf("findings %+v, want one PLAN006 warning", b.Findings)
	}
}

func TestAKubernetesReleaseBeforeV1Beta4JoinsIsRefused(t *testing.T) {
	cases := []struct {
		version string
		refused bool
	}{
		{"v1.30.4", true},
		{"v1.31.0", false},
		{"v1.37.2", false},
		{"v2.0.0", false},
		{"<KUBERNETES_VERSION>", false},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			if got := len(versionBlockers(tc.version)) > 0; got != tc.refused {
				t.Errorf("refused %v, want %v", got, tc.refused)
			}
		})
	}
}
