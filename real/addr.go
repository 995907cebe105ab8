package real

import (
	"fmt"
	"net/netip"
)

// limitedBroadcast is 255.255.255.255, the IPv4 broadcast of the local
// network.
var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// CanonicalAddr returns a node's address in the one spelling the world
// compares: an IPv4-mapped IPv6 address (::ffff:127.0.0.1) as its IPv4
// address (127.0.0.1), which is what the kernel reports as the source of
// an IPv4 datagram.
func CanonicalAddr(a netip.Addr) netip.Addr { return a.Unmap() }

// CheckUnicast reports whether a can be a node's address: one host's own
// unicast address, which the node binds and which the others send to.
// It refuses, saying which, the unspecified address (0.0.0.0, ::: binding
// it takes the port on every address of the host, and nothing can be sent
// to it), the IPv4 limited broadcast 255.255.255.255, and multicast
// addresses. a is taken in its canonical form (CanonicalAddr), so
// ::ffff:0.0.0.0 is refused as 0.0.0.0 is.
func CheckUnicast(a netip.Addr) error {
	a = CanonicalAddr(a)
	switch {
	case !a.IsValid():
		return fmt.Errorf("no address: expected a node's unicast IPv4 or IPv6 address")
	case a.IsUnspecified():
		return fmt.Errorf("%s is the unspecified address (any address of the host), not one node's: give the node's own unicast address", a)
	case a == limitedBroadcast:
		return fmt.Errorf("%s is the broadcast address, not one node's: give the node's own unicast address", a)
	case a.IsMulticast():
		return fmt.Errorf("%s is a multicast address, not one node's: give the node's own unicast address", a)
	}
	return nil
}

// CheckUnicastIn is CheckUnicast for an address written with its subnet's
// prefix length (10.0.0.5/24): it also refuses the subnet's broadcast
// address (all host bits set; an IPv4 subnet of 30 bits or fewer).
func CheckUnicastIn(p netip.Prefix) error {
	a := CanonicalAddr(p.Addr())
	if err := CheckUnicast(a); err != nil {
		return err
	}
	bits := p.Bits()
	if a.Is4() && p.Addr().Is4In6() {
		bits -= 96
	}
	if !a.Is4() || bits < 0 || bits > 30 {
		return nil
	}
	b := a.As4()
	host := ^uint32(0) >> bits
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	if v&host == host {
		return fmt.Errorf("%s is the broadcast address of the subnet %s, not one node's: give the node's own unicast address",
			a, netip.PrefixFrom(a, bits).Masked())
	}
	return nil
}
