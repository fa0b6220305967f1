package nslab

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

// addrAdd is the IPv4 address n after a.
func addrAdd(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := binary.BigEndian.Uint32(b[:]) + uint32(n)
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// subnetSize is how many addresses an IPv4 prefix holds (capped at 2^31).
func subnetSize(p netip.Prefix) int {
	bits := 32 - p.Bits()
	if bits >= 31 {
		return 1 << 31
	}
	return 1 << bits
}

// hostPrefix is a as a /32.
func hostPrefix(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, 32) }

// linkBits is the prefix length of every point-to-point link (a /30: the
// network, two ends, the broadcast address).
const linkBits = 30

// hostLinkAddrs are the switch's and host's addresses on host h's link.
func hostLinkAddrs(h int) (sw, host netip.Addr) {
	base := addrAdd(DataSubnet.Addr(), 4*h)
	return addrAdd(base, 1), addrAdd(base, 2)
}

// fabricLinkAddrs are the lower and upper tier's addresses on switch link i.
func fabricLinkAddrs(i int) (lower, upper netip.Addr) {
	base := addrAdd(FabricSubnet.Addr(), 4*i)
	return addrAdd(base, 1), addrAdd(base, 2)
}

// mgmtAddrs are host h's management address and the root namespace's (the
// last usable address of the subnet).
func mgmtHostAddr(p netip.Prefix, h int) netip.Addr { return addrAdd(p.Addr(), h+1) }

func mgmtRootAddr(p netip.Prefix) netip.Addr { return addrAdd(p.Addr(), subnetSize(p)-2) }
