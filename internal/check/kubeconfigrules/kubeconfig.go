package kubeconfigrules

import (
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func KubeconfigRules() []rule.Rule { return []rule.Rule{ruleKubeconfigCollision} }

// kcEntry is one named entry of a kubeconfig.
type kcEntry struct {
	kc       *rule.Kubeconfig
	describe string
	value    any
}

var ruleKubeconfigCollision = rule.Rule{
	ID: "HYB070", Name: "kubeconfig-name-collision", Severity: rule.Error,
	Title:    "Kubeconfig files define different clusters, users or contexts under one name",
	Examines: []string{rule.KubeconfigFiles},
	Needs:    []rule.Need{{rule.KubeconfigFiles}},
	Description: `kubeadm names the entries of every cluster's admin.conf alike: cluster kubernetes, user
kubernetes-admin, context kubernetes-admin@kubernetes. When several files are merged (KUBECONFIG
with a list of files), the first file to set a name wins, so the "second" context silently gets
the first cluster's address and credentials, and a kubectl delete meant for the test cluster
runs against the main one. Copy the second cluster's entries under names of their own instead.`,
	Remediation: `kubectl config set-cluster lab --server=https://<lab API>:6443; kubectl config set clusters.lab.certificate-authority-data <CA>; kubectl config set users.lab-admin.client-certificate-data <cert>; kubectl config set users.lab-admin.client-key-data <key>; kubectl config set-context lab --cluster=lab --user=lab-admin`,
	References:  []rule.Reference{rule.RefKubeconfigContexts, rule.K8sKubeconfig},
	Check: func(x *rule.Context) []rule.Finding {
		if len(x.Kubeconfigs) < 2 {
			return nil
		}
		var out []rule.Finding
		check := func(section, noun string, entries func(*rule.Kubeconfig) map[string]kcEntry) {
			first := map[string]kcEntry{}
			for _, kc := range x.Kubeconfigs {
				m := entries(kc)
				for _, name := range rule.SortedKeys(m) {
					e := m[name]
					prev, ok := first[name]
					if !ok {
						first[name] = e
						continue
					}
					if reflect.DeepEqual(prev.value, e.value) {
						continue
					}
					base := filepath.Base(kc.File)
					f := rule.Finding{
						Object: model.Key{Kind: "Config", Name: base}, Field: fmt.Sprintf("%s[name=%s]", section, name),
						Location: model.Origin{File: kc.File, Line: kc.Lines[section+"/"+name]},
						Message: fmt.Sprintf("%s %s is defined in %s%s and differently in %s%s; merged with KUBECONFIG, the first file wins and %s's entry is ignored",
							noun, name, prev.kc.File, prev.describe, kc.File, e.describe, base),
						Remediation: kubeconfigFix(kc.File, section, name, e),
					}
					out = append(out, f)
				}
			}
		}
		check("clusters", "cluster", func(kc *rule.Kubeconfig) map[string]kcEntry {
			m := map[string]kcEntry{}
			for name, c := range kc.Config.Clusters {
				m[name] = kcEntry{kc: kc, describe: " (server " + c.Server + ")", value: [3]any{c.Server, string(c.CertificateAuthorityData), c.CertificateAuthority}}
			}
			return m
		})
		check("users", "user", func(kc *rule.Kubeconfig) map[string]kcEntry {
			m := map[string]kcEntry{}
			for name, u := range kc.Config.AuthInfos {
				// Credentials are compared, never printed.
				m[name] = kcEntry{kc: kc, value: [6]any{string(u.ClientCertificateData), string(u.ClientKeyData), u.ClientCertificate, u.ClientKey, u.Token, u.Username}}
			}
			return m
		})
		check("contexts", "context", func(kc *rule.Kubeconfig) map[string]kcEntry {
			m := map[string]kcEntry{}
			for name, c := range kc.Config.Contexts {
				server := ""
				if cl := kc.Config.Clusters[c.Cluster]; cl != nil {
					server = ", server " + cl.Server
				}
				m[name] = kcEntry{kc: kc, describe: fmt.Sprintf(" (cluster %s, user %s%s)", c.Cluster, c.AuthInfo, server),
					value: [4]any{c.Cluster, c.AuthInfo, c.Namespace, server}}
			}
			return m
		})
		return out
	},
}

// kubeconfigFix copies the second file's entry under a new name, the way
// seed 000 copies the lab's admin.conf into ~/.kube/config.
func kubeconfigFix(file, section, name string, e kcEntry) string {
	switch section {
	case "clusters":
		server := "<its server>"
		if c := e.kc.Config.Clusters[name]; c != nil && c.Server != "" {
			server = c.Server
		}
		return fmt.Sprintf("kubectl config set-cluster <new name> --server=%s; kubectl config set clusters.<new name>.certificate-authority-data <its CA from %s>", server, file)
	case "users":
		return fmt.Sprintf("kubectl config set users.<new name>.client-certificate-data <cert from %s>; kubectl config set users.<new name>.client-key-data <key from %s>", file, file)
	}
	return fmt.Sprintf("kubectl config set-context <new name> --cluster=<new cluster name> --user=<new user name> (or kubectl --kubeconfig %s config rename-context %s <new name>)", file, name)
}
