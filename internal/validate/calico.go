package validate

import (
	"fmt"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
)

var encapModes = []string{calico.ModeAlways, calico.ModeCrossSubnet, calico.ModeNever}

// ipPoolSpec is what Calico's API refuses in one pool (libcalico-go
// lib/clientv3/ippool.go validateAndSetDefaults, and the encapsulation
// modes and node selector of lib/validator/v3/validator.go). Overlaps with
// other pools are PoolOverlaps.
func ipPoolSpec(s *calico.IPPoolSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range []struct {
		name, v string
	}{{"vxlanMode", s.VXLANMode}, {"ipipMode", s.IPIPMode}} {
		if m.v != "" && !slices.Contains(encapModes, m.v) {
			errs = append(errs, field.NotSupported(p.Child(m.name), m.v, encapModes))
		}
	}
	errs = append(errs, calicoSelector(s.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, calicoSelector(s.NamespaceSelector, p.Child("namespaceSelector"))...)
	cp := p.Child("cidr")
	if s.CIDR == "" {
		return append(errs, field.Required(cp, ""))
	}
	pfx, err := netip.ParsePrefix(s.CIDR)
	if err != nil {
		return errs // the loader has reported it
	}
	size := s.BlockSize
	if size == 0 {
		size = 26 // Calico's default, 122 for IPv6
		if pfx.Addr().Is6() {
			size = 122
		}
	}
	if pfx.Addr().Is4() && (size < 20 || size > 32) {
		errs = append(errs, field.Invalid(p.Child("blockSize"), s.BlockSize, "IPv4 block size must be between 20 and 32"))
	}
	if pfx.Addr().Is6() && (size < 116 || size > 128) {
		errs = append(errs, field.Invalid(p.Child("blockSize"), s.BlockSize, "IPv6 block size must be between 116 and 128"))
	}
	if !s.Disabled && pfx.Bits() > size {
		errs = append(errs, field.Invalid(cp, s.CIDR, "IP pool size is too small for use with Calico IPAM. It must be equal to or greater than the block size."))
	}
	vxlan := s.VXLANMode != "" && s.VXLANMode != calico.ModeNever
	ipip := s.IPIPMode != "" && s.IPIPMode != calico.ModeNever
	if vxlan && ipip {
		errs = append(errs, field.Invalid(p.Child("vxlanMode"), s.VXLANMode, "Cannot enable both VXLAN and IPIP on the same IPPool"))
	}
	if pfx.Addr().Is6() && ipip {
		errs = append(errs, field.Invalid(p.Child("ipipMode"), s.IPIPMode, "IPIP is not supported on an IPv6 IP pool"))
	}
	if pfx.Masked() != pfx {
		errs = append(errs, field.Invalid(cp, s.CIDR, "IPPool CIDR is not strictly masked"))
	}
	if pfx.Addr().Is4() && pfx.Overlaps(linkLocal4) {
		errs = append(errs, field.Invalid(cp, s.CIDR, "IPPool CIDR overlaps with IPv4 Link Local range 169.254.0.0/16"))
	}
	if pfx.Addr().Is6() && pfx.Overlaps(linkLocal6) {
		errs = append(errs, field.Invalid(cp, s.CIDR, "IPPool CIDR overlaps with IPv6 Link Local range fe80::/10"))
	}
	return errs
}

var (
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6 = netip.MustParsePrefix("fe80::/10")
)

// Pool is one IPPool for PoolOverlaps.
type Pool struct {
	Name string
	CIDR string
	// Managed marks a pool the Tigera operator creates from the
	// Installation's spec.calicoNetwork.ipPools. Its errors are the
	// operator's to report. Unnamed (Name ""), the operator names it; an
	// IPPool with its CIDR is then that same pool as a dump shows it.
	Managed bool
}

// PoolOverlaps returns, for each pool, the error Calico gives when it is
// created while the pools before it exist: its CIDR overlaps another's
// (libcalico-go lib/clientv3/ippool.go). The result is indexed like pools;
// pools whose CIDR does not parse, and managed pools, get none.
func PoolOverlaps(pools []Pool) []field.ErrorList {
	out := make([]field.ErrorList, len(pools))
	prefixes := make([]netip.Prefix, len(pools))
	for i, p := range pools {
		prefixes[i], _ = netip.ParsePrefix(p.CIDR)
	}
	for i, p := range pools {
		if !prefixes[i].IsValid() || p.Managed {
			continue
		}
		reported := map[string]bool{}
		for j := 0; j < i; j++ {
			q := pools[j]
			if q.Name != "" && reported[q.Name] {
				continue // the operator's pool and the same pool in a dump
			}
			same := q.Name == p.Name || q.Managed && q.Name == "" && prefixes[j].Masked() == prefixes[i].Masked()
			if prefixes[j].IsValid() && !same && prefixes[j].Overlaps(prefixes[i]) {
				other := q.Name
				if other == "" {
					other = "the Installation's pool"
				}
				reported[q.Name] = true
				out[i] = append(out[i], field.Invalid(field.NewPath("spec", "cidr"), p.CIDR,
					fmt.Sprintf("IPPool(%s) CIDR overlaps with IPPool(%s) CIDR %s", p.Name, other, q.CIDR)))
			}
		}
	}
	return out
}

// calicoPolicySpec checks the selectors of a Calico NetworkPolicy or
// GlobalNetworkPolicy, which Calico's validator parses
// (lib/validator/v3/validator.go validateSelector).
func calicoPolicySpec(s *calico.PolicySpec, p *field.Path) field.ErrorList {
	errs := calicoSelector(s.Selector, p.Child("selector"))
	errs = append(errs, calicoSelector(s.NamespaceSelector, p.Child("namespaceSelector"))...)
	errs = append(errs, calicoSelector(s.ServiceAccountSelector, p.Child("serviceAccountSelector"))...)
	for _, dir := range []struct {
		name  string
		rules []calico.Rule
	}{{"ingress", s.Ingress}, {"egress", s.Egress}} {
		for i, r := range dir.rules {
			rp := p.Child(dir.name).Index(i)
			errs = append(errs, entityRule(&r.Source, rp.Child("source"))...)
			errs = append(errs, entityRule(&r.Destination, rp.Child("destination"))...)
		}
	}
	return errs
}

func entityRule(e *calico.EntityRule, p *field.Path) field.ErrorList {
	errs := calicoSelector(e.Selector, p.Child("selector"))
	errs = append(errs, calicoSelector(e.NotSelector, p.Child("notSelector"))...)
	errs = append(errs, calicoSelector(e.NamespaceSelector, p.Child("namespaceSelector"))...)
	if e.ServiceAccounts != nil {
		errs = append(errs, calicoSelector(e.ServiceAccounts.Selector, p.Child("serviceAccounts", "selector"))...)
	}
	return errs
}

func calicoSelector(s string, p *field.Path) field.ErrorList {
	if s == "" {
		return nil
	}
	if _, err := selector.Parse(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, "invalid selector: "+err.Error())}
	}
	return nil
}
