package webhook_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"broll/internal/apperr"
	"broll/internal/outbox"
	"broll/webhook"
)

// The creation-time check refuses loopback written in any of the IPv6
// forms that embed an IPv4 address, and localhost in any case or with the
// root's trailing dot; each form is its own case.
func TestAddressCheckRefusesHiddenLoopback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	strict := webhook.New(b.pool, b.sealer, webhook.ServiceOptions{})
	for _, u := range []string{
		"https://[::7f00:1]/hook",           // IPv4-compatible, hex
		"https://[::127.0.0.1]/hook",        // IPv4-compatible, dotted
		"https://[::ffff:0:7f00:1]/hook",    // IPv4-translated
		"https://[::ffff:0:127.0.0.1]/hook", // IPv4-translated, dotted
		"https://[::ffff:127.0.0.1]/hook",   // IPv4-mapped
		"https://[::ffff:7f00:1]/hook",      // IPv4-mapped, hex
		"https://[::a00:1]/hook",            // IPv4-compatible 10.0.0.1
		"https://[64:ff9b::7f00:1]/hook",    // NAT64 of 127.0.0.1
		"https://LOCALHOST/hook",
		"https://LocalHost./hook",
		"https://localhost./hook",
		"https://api.LOCALHOST/hook",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := strict.Create(context.Background(), b.owner(), webhook.NewEndpoint{URL: u, Events: []string{outbox.KeyCreated}})
			if apperr.CodeOf(err) != apperr.Invalid {
				t.Fatalf("got %v, want invalid_request", err)
			}
		})
	}
}

// A delivery's stored error, which the tenant reads in its deliveries, is
// one of a few fixed texts: never a resolver's address, a dialled address
// or an internal host name.
func TestDeliveryErrorsAreFixedTexts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// A port nobody listens on: the listener is closed before delivery.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hook"
	_ = ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	failing := newReceiver(t)
	failing.status = func(int) int { return http.StatusInternalServerError }
	cases := []struct{ name, url, want string }{
		{"connection refused", closed, "connection refused"},
		{"unknown name", "https://no-such-host.invalid/hook", "dns lookup failed"},
		{"untrusted certificate", tlsSrv.URL + "/hook", "tls error"},
		{"server error", failing.URL + "/hook", "http 500"},
	}
	ids := map[string]string{}
	for _, c := range cases {
		ep, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: c.url, Events: []string{outbox.ClipsEmbedded}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ids[c.name] = ep.ID.String()
	}
	writeEvents(t, b, 1, outbox.ClipsEmbedded)
	d := webhook.NewDeliverer(b.pool, b.sealer, webhook.DelivererOptions{Allow: loopback(t), RetryBase: time.Hour})
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep, _ := b.hooks.List(ctx, b.owner())
			for _, e := range ep {
				if e.ID.String() != ids[c.name] {
					continue
				}
				attempts, err := b.hooks.Deliveries(ctx, b.owner(), e.ID, 0)
				if err != nil || len(attempts) != 1 {
					t.Fatalf("log %+v %v", attempts, err)
				}
				if attempts[0].Error != c.want {
					t.Fatalf("stored error %q, want %q", attempts[0].Error, c.want)
				}
				for _, leak := range []string{"127.0.0.1", "no-such-host", ":53", "dial", "no such host", "x509"} {
					if strings.Contains(attempts[0].Error, leak) {
						t.Fatalf("stored error %q names %q", attempts[0].Error, leak)
					}
				}
				return
			}
			t.Fatal("endpoint not listed")
		})
	}
}
