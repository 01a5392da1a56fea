package tenancy

import "net/netip"

// AddressBucket names the client address that per-address limits count:
// an IPv4 address itself, but an IPv6 address by its /64, since one
// subscriber usually holds a whole /64 and could otherwise take a fresh
// address for every attempt. Text that is not an address is its own bucket.
func AddressBucket(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}
