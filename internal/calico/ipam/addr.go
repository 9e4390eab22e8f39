package ipam

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"net/netip"
	"strings"
)

// addrInt returns a as an unsigned integer.
func addrInt(a netip.Addr) *big.Int {
	if a.Is4() {
		b := a.As4()
		return new(big.Int).SetBytes(b[:])
	}
	b := a.As16()
	return new(big.Int).SetBytes(b[:])
}

// intAddr turns an integer back into an address of the given family.
func intAddr(i *big.Int, v4 bool) netip.Addr {
	if v4 {
		var b [4]byte
		i.FillBytes(b[:])
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	i.FillBytes(b[:])
	return netip.AddrFrom16(b)
}

// addrAdd returns a+n.
func addrAdd(a netip.Addr, n *big.Int) netip.Addr {
	return intAddr(new(big.Int).Add(addrInt(a), n), a.Is4())
}

// nthAddr is the n-th address of p (n=0 is the network address).
func nthAddr(p netip.Prefix, n int) netip.Addr {
	return addrAdd(p.Addr(), big.NewInt(int64(n)))
}

// ordinalOf is the position of a inside p, as ipam_block.go IPToOrdinal.
func ordinalOf(p netip.Prefix, a netip.Addr) (int, bool) {
	if !p.Contains(a) {
		return 0, false
	}
	d := new(big.Int).Sub(addrInt(a), addrInt(p.Addr()))
	return int(d.Int64()), true
}

// pow2 is 2^n.
func pow2(n int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(n)) }

// BlockName is the resource name Calico gives an IPAMBlock: the CIDR with
// dots, colons and the slash turned into dashes (libcalico-go
// lib/names/cidr.go CIDRToName), e.g. 172-21-41-0-26.
func BlockName(cidr netip.Prefix) string {
	s := cidr.String()
	s = strings.Replace(s, ".", "-", 3)
	s = strings.Replace(s, ":", "-", 7)
	return strings.Replace(s, "/", "-", 1)
}

// AffinityName is the name of a BlockAffinity: "<node>-<block name>"; a
// name of 253 characters or more keeps a shortened node name plus 11 hex
// digits of a SHA-256 over "<node>+<block name>"
// (libcalico-go lib/backend/k8s/resources/ipam_affinity_v1.go parseKey).
func AffinityName(node string, cidr netip.Prefix) string {
	cn := BlockName(cidr)
	name := node + "-" + cn
	if len(name) < 253 {
		return name
	}
	sum := sha256.Sum256([]byte(node + "+" + cn))
	return node[:252-len(cn)-13] + "-" + cn + "-" + hex.EncodeToString(sum[:])[:11]
}
