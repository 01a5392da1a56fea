package api

import (
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// clientAddr returns how a request's client address is found. Behind
// trusted proxies it is the right-most X-Forwarded-For entry that is not a
// proxy: each proxy appends the address it saw, so entries to the left of
// that one are whatever the client chose to send and are never believed
// (a client could otherwise pick a fresh address for every sign-in
// attempt). Without trusted proxies, or from any other peer, it is the
// connection's address.
func clientAddr(trusted []netip.Prefix) func(*fiber.Ctx) string {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(c *fiber.Ctx) string {
		peer := c.Context().RemoteIP().String()
		if len(trusted) == 0 {
			return peer
		}
		if a, err := netip.ParseAddr(peer); err != nil || !isTrusted(a.Unmap()) {
			return peer
		}
		hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				// Garbage where an address should be: stop believing the
				// header at this point.
				break
			}
			if a = a.Unmap(); !isTrusted(a) {
				return a.String()
			}
		}
		return peer
	}
}
