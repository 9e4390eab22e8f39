package ipam

import (
	"hash/fnv"
	"math/big"
	"math/rand"
	"net/netip"
	"sort"
)

// walkSeed is the seed of a host's walk over a pool's blocks
// (ipam_block_reader_writer.go determineSeed): FNV-32 (not 32a) of the host
// name, so a host always starts at the same block. For blocks of a single
// address (/32, /128) upstream seeds from the wall clock instead; the model
// takes that seed from Config.SmallBlockSeed so that it stays deterministic.
func walkSeed(p *pool, host string, smallBlockSeed int64) int64 {
	if p.BlockSize == p.CIDR.Addr().BitLen() {
		return smallBlockSeed
	}
	h := fnv.New32()
	h.Write([]byte(host))
	return int64(h.Sum32())
}

// walkStart is the index of the first block the host looks at: a uniform
// pick from [0, numBlocks) by math/rand seeded as above
// (ipam_block_reader_writer.go randomBlockGenerator).
func walkStart(p *pool, host string, smallBlockSeed int64) *big.Int {
	r := rand.New(rand.NewSource(walkSeed(p, host, smallBlockSeed)))
	return new(big.Int).Rand(r, p.numBlocks)
}

// blockAt is the idx-th block of the pool.
func (p *pool) blockAt(idx *big.Int) netip.Prefix {
	a := addrAdd(p.CIDR.Addr(), new(big.Int).Mul(idx, p.blockSpan))
	return netip.PrefixFrom(a, p.BlockSize)
}

// blockIndex is the position of a block inside the pool.
func (p *pool) blockIndex(b netip.Prefix) *big.Int {
	d := new(big.Int).Sub(addrInt(b.Addr()), addrInt(p.CIDR.Addr()))
	return d.Div(d, p.blockSpan)
}

// walk calls yield for every block of the pool in the order
// randomBlockGenerator returns them: from the host's start index upwards,
// wrapping to 0, each block once. It stops early when yield returns false.
func (p *pool) walk(host string, smallBlockSeed int64, yield func(netip.Prefix) bool) {
	i := walkStart(p, host, smallBlockSeed)
	one := big.NewInt(1)
	last := new(big.Int).Sub(p.numBlocks, one)
	for n := new(big.Int); n.Cmp(p.numBlocks) < 0; n.Add(n, one) {
		if !yield(p.blockAt(i)) {
			return
		}
		if i.Cmp(last) >= 0 {
			i = new(big.Int)
		} else {
			i = new(big.Int).Add(i, one)
		}
	}
}

// inWalkOrder sorts blocks of the pool by the position the host's walk
// reaches them. Walking a whole pool only to skip the blocks that do not
// exist yields exactly this order, without visiting 2^58 blocks of an IPv6
// pool.
func (p *pool) inWalkOrder(host string, smallBlockSeed int64, blocks []netip.Prefix) []netip.Prefix {
	start := walkStart(p, host, smallBlockSeed)
	pos := func(b netip.Prefix) *big.Int {
		d := new(big.Int).Sub(p.blockIndex(b), start)
		return d.Mod(d, p.numBlocks)
	}
	out := append([]netip.Prefix(nil), blocks...)
	sort.Slice(out, func(i, j int) bool { return pos(out[i]).Cmp(pos(out[j])) < 0 })
	return out
}
