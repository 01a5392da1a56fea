package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	// fiber's app.Test connects from 0.0.0.0.
	lb := netip.MustParsePrefix("0.0.0.0/32")
	internal := netip.MustParsePrefix("10.0.0.0/8")
	cases := []struct {
		name    string
		trusted []netip.Prefix
		xff     string
		want    string
	}{
		{"no trusted proxies: the header is ignored", nil, "203.0.113.7", "0.0.0.0"},
		{"peer not trusted: the header is ignored", []netip.Prefix{internal}, "203.0.113.7", "0.0.0.0"},
		{"one trusted hop", []netip.Prefix{lb}, "203.0.113.7", "203.0.113.7"},
		{"a forged left-most entry is not believed", []netip.Prefix{lb}, "198.51.100.1, 203.0.113.7", "203.0.113.7"},
		{"trusted hops on the right are skipped", []netip.Prefix{lb, internal}, "198.51.100.1, 203.0.113.7, 10.1.2.3", "203.0.113.7"},
		{"IPv6 client", []netip.Prefix{lb}, "2001:db8::1", "2001:db8::1"},
		{"garbage stops the walk", []netip.Prefix{lb, internal}, "203.0.113.7, not-an-ip, 10.1.2.3", "0.0.0.0"},
		{"no header", []netip.Prefix{lb}, "", "0.0.0.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := fiber.New()
			addr := clientAddr(tc.trusted)
			app.Get("/", func(c *fiber.Ctx) error { return c.SendString(addr(c)) })
			req := httptest.NewRequest("GET", "/", nil)
			if tc.xff != "" {
				req.Header.Set("X-Forwarded-For", tc.xff)
			}
			res, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			body := make([]byte, 64)
			n, _ := res.Body.Read(body)
			if got := string(body[:n]); got != tc.want {
				t.Fatalf("client address %q, want %q", got, tc.want)
			}
		})
	}
}
