package kubeproxy

import (
	"net/netip"
	"testing"
)

// Chain names published upstream: pkg/proxy/nftables/proxier_test.go
// (TestOverallNFTablesRules, Test_servicePortChainNameBase,
// Test_servicePortEndpointChainNameBase) and a live v1.36.2 ruleset.
// Chain names published upstream: pkg/proxy/nftables/proxier_test.go
// (TestOverallNFTablesRules, Test_servicePortChainNameBase,
// Test_servicePortEndpointChainNameBase) and a live v1.36.2 ruleset.
func TestHashAndTruncateGivesUpstreamsChainNames(t *testing.T) {
	long := "very-long-namespace-name-abcdefghijklmnopqrstuvwxyz0123456789xx/very-long-service-name-why-would-you-even-do-this-i-mean-really/sctp/port-443-providing-the-hypertext-transmission-protocol-with-tls"
	for _, tc := range []struct{ name, in, want string }{
		{"the test suite's svc1", "ns1/svc1/tcp/p80", "ULMVA6XW-ns1/svc1/tcp/p80"},
		{"a named http port", "testing/service/tcp/http", "P4ZYZVCF-testing/service/tcp/http"},
		{"a different port name gives a different hash", "testing/service/tcp/https", "LZBRENCP-testing/service/tcp/https"},
		{"an endpoint base", "testing/service/tcp/http__10.180.0.1/80", "JO2XBXZR-testing/service/tcp/http__10.180.0.1/80"},
		{"the kubernetes service as a live node prints it", "default/kubernetes/tcp/https", "2QRHZV4L-default/kubernetes/tcp/https"},
		{"a maximum-length service name is not truncated", long, "KR6NACJP-" + long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HashAndTruncate(tc.in); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDNATRule(t *testing.T) {
	e := func(s, node string) ServiceEndpoint {
		return ServiceEndpoint{Addr: netip.MustParseAddrPort(s), Node: node}
	}
	for _, tc := range []struct {
		name string
		eps  []ServiceEndpoint
		want string
	}{
		{"a single endpoint is a plain dnat (kubernetes#140723)", []ServiceEndpoint{e("192.168.10.23:6443", "")},
			"meta l4proto tcp dnat to 192.168.10.23:6443"},
		{"several endpoints are a numgen map in endpoint order", []ServiceEndpoint{e("172.21.172.4:8080", "b"), e("172.21.211.25:8080", "a")},
			"meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dnatRule("tcp", tc.eps); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
