package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrForbiddenAddress is the refusal of an address that is not public
// (loopback, private, link-local, cloud metadata...) and not allowed.
var ErrForbiddenAddress = errors.New("webhook: the address is not public and not allowed")

// nonPublic are the ranges that are never dialled unless allowed, besides
// what netip classifies (loopback, private, link-local, multicast,
// unspecified): shared address space, "this network", benchmarking,
// reserved, and the IPv6 forms that embed an IPv4 address, which some
// stacks reach as that IPv4 address ([::7f00:1] or [::ffff:0:7f00:1] may
// be 127.0.0.1): IPv4-compatible (::/96), IPv4-translated
// (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 and
// Teredo; IPv4-mapped addresses are unmapped before any check.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// hostName is a host as names compare: lower case, without the trailing
// dot of a fully qualified name (LocalHost. is localhost).
func hostName(host string) string { return strings.TrimSuffix(strings.ToLower(host), ".") }

// Allow is the set of hosts BROLL_WEBHOOK_ALLOW_HOSTS lets through although
// they are not public: host names (as written in endpoint URLs), addresses
// and CIDR ranges.
type Allow struct {
	names    map[string]bool
	prefixes []netip.Prefix
}

// ParseAllow reads the comma-separated list of BROLL_WEBHOOK_ALLOW_HOSTS.
func ParseAllow(list []string) (Allow, error) {
	a := Allow{names: map[string]bool{}}
	for _, raw := range list {
		v := strings.ToLower(strings.TrimSpace(raw))
		switch {
		case v == "":
		case strings.Contains(v, "/"):
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return Allow{}, fmt.Errorf("%q is not a CIDR range", raw)
			}
			a.prefixes = append(a.prefixes, p.Masked())
		default:
			if ip, err := netip.ParseAddr(strings.Trim(v, "[]")); err == nil {
				a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			} else {
				a.names[v] = true
			}
		}
	}
	return a, nil
}

func (a Allow) name(host string) bool { return a.names[hostName(host)] }

func (a Allow) addr(ip netip.Addr) bool { return within(a.prefixes, ip) }

func within(prefixes []netip.Prefix, ip netip.Addr) bool {
	return slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// public reports whether ip may be dialled without being allowed.
func public(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() && !ip.IsMulticast() && !ip.IsUnspecified() &&
		!within(nonPublic, ip)
}

// permits reports whether an endpoint URL's host may be used as written:
// an allowed name, or an address that is public or allowed. Other names are
// checked when dialled, against the address they resolved to.
func (a Allow) permits(host string) bool {
	if a.name(host) {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		name := hostName(host)
		return name != "localhost" && !strings.HasSuffix(name, ".localhost")
	}
	ip = ip.Unmap()
	return public(ip) || a.addr(ip)
}

// dialTimeout bounds the connection, within the request's own timeout.
const dialTimeout = 5 * time.Second

// dialContext dials like net.Dialer but refuses, before connecting, any
// address that is not public unless allowed. The check runs in the
// dialer's Control hook, on the address actually dialled after name
// resolution, so a name that resolves (or re-resolves) to a private
// address is refused as well.
func (a Allow) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	nameAllowed := a.name(host)
	d := net.Dialer{Timeout: dialTimeout, Control: func(_, addr string, _ syscall.RawConn) error {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(h)
		if err != nil {
			return ErrForbiddenAddress
		}
		ip = ip.Unmap()
		if nameAllowed || public(ip) || a.addr(ip) {
			return nil
		}
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ip)
	}}
	return d.DialContext(ctx, network, address)
}

// addrLiteral reports whether host is an allowed address written as such.
func (a Allow) addrLiteral(host string) bool {
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.addr(ip.Unmap())
}
