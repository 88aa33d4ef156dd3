package web

import (
	"bytes"
	"net/netip"

	"github.com/gofiber/fiber/v2"
)

// clientAddress is the address a request comes from, for the limits per
// address (sign-in attempts, intakes an hour) and the audit log. Sent by a
// proxy in Config.TrustedProxies, it is the address that proxy saw: walking
// X-Forwarded-For from the right, the first entry that is not itself a
// trusted proxy; an entry that is not an address stops the walk at the
// nearest trusted proxy, whose address it is then. From anyone else it is
// the connection's own address, whatever the header says.
//
// Written by hand because Fiber's c.IP() with a ProxyHeader returns the
// leftmost valid entry, which the client writes itself whenever a proxy
// appends to the header (nginx's $proxy_add_x_forwarded_for, HAProxy's
// forwardfor on a request that has one): a client could pick any address
// and so escape every limit per address.
func (s *Server) clientAddress(c *fiber.Ctx) string {
	remote, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.IP()
	}
	remote = remote.Unmap()
	if !s.trustedProxy(remote) {
		return remote.String()
	}
	// Every X-Forwarded-For line, in order: a proxy may add a line of its
	// own rather than append to the last.
	var entries [][]byte
	for _, line := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		entries = append(entries, bytes.Split(line, []byte(","))...)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		addr, ok := parseForwarded(string(bytes.TrimSpace(entries[i])))
		if !ok {
			break // garbage: nothing left of it can be believed
		}
		if !s.trustedProxy(addr) {
			return addr.String()
		}
		remote = addr
	}
	return remote.String()
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseForwarded reads one X-Forwarded-For entry: an address, or an
// address and port as some proxies write it ("192.0.2.1:4711",
// "[2001:db8::1]:4711").
func parseForwarded(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}
