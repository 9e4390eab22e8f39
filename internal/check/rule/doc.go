// Package rule is what the check rules are written in: a Rule (ID, name,
// severity, what it examines and needs, description, remediation,
// references and its Check function), the Findings it returns, the
// Registry that holds a catalogue of rules, and the Context a rule reads:
// the built cluster and the indexes shared by every rule (nodes by name,
// pods by node and by workload, endpoints by Service, ...), built once per
// run, with the facts about the Calico install, kubeadm and Windows nodes
// that several families of rules read. It also says why a rule did not run
// and where a finding's object was read from. Package check runs the rules;
// the rule families live in its subpackages.
package rule
