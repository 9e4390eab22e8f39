package policysets

import (
	"testing"
)

func TestACLListEntriesReadAsVFPPrintsThem(t *testing.T) {
	addrs := []struct {
		name, in string
		want     string
		ok       bool
	}{
		{"a host without /32 is a single address", "10.0.0.1", "10.0.0.1/32", true},
		{"a prefix stays a prefix", " 10.0.0.0/16", "10.0.0.0/16", true},
		{"a host with /32 is the same address", "10.1.2.3/32 ", "10.1.2.3/32", true},
		{"anything else is no entry", "any", "", false},
	}
	for _, tc := range addrs {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := ACLAddress(tc.in)
			if ok != tc.ok || ok && p.String() != tc.want {
				t.Errorf("ACLAddress(%q) = %v, %t; want %s, %t", tc.in, p, ok, tc.want, tc.ok)
			}
		})
	}
	ports := []struct {
		name, in string
		lo, hi   int
		ok       bool
	}{
		{"one port is a range of one", "443", 443, 443, true},
		{"a range keeps both ends", " 8000-8080", 8000, 8080, true},
		{"a word is no entry", "http", 0, 0, false},
		{"a range with a word end is no entry", "1-y", 0, 0, false},
	}
	for _, tc := range ports {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, ok := ACLPortRange(tc.in)
			if ok != tc.ok || lo != tc.lo || hi != tc.hi {
				t.Errorf("ACLPortRange(%q) = %d, %d, %t; want %d, %d, %t", tc.in, lo, hi, ok, tc.lo, tc.hi, tc.ok)
			}
		})
	}
}

func FuzzACLListEntries(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.0/16", "fd00::1", "80", "8000-8080", "-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := ACLAddress(s); ok && !p.Contains(p.Masked().Addr()) {
			t.Errorf("ACLAddress(%q) = %v does not contain its own network", s, p)
		}
		if lo, hi, ok := ACLPortRange(s); !ok && (lo != 0 || hi != 0) {
			t.Errorf("ACLPortRange(%q) = %d, %d without an entry", s, lo, hi)
		}
	})
}
