package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/testkit"
)

// TestClientThatLeavesIsNotAServerError: over a real socket, a client
// that closes its connection while its request runs cancels the
// request's context (cancelOnDisconnect), and the request is recorded as
// 499 with nothing in the error log, not as a 500 "internal error". A
// cancelled context the client did not cause is still a 500.
func TestClientThatLeavesIsNotAServerError(t *testing.T) {
	var logs testkit.SyncBuffer
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler(slog.New(slog.NewTextHandler(&logs, nil)), "http://api.test")})
	statuses := make(chan int, 4)
	app.Use(func(c *fiber.Ctx) error { // records the final status, as apiMetrics.observe does
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		statuses <- c.Response().StatusCode()
		return nil
	})
	app.Use(cancelOnDisconnect)
	started := make(chan struct{}, 1)
	app.Get("/wait", func(c *fiber.Ctx) error {
		started <- struct{}{}
		select {
		case <-c.UserContext().Done():
			return fmt.Errorf("search: %w", c.UserContext().Err())
		case <-time.After(10 * time.Second):
			return c.SendString("nobody left")
		}
	})
	app.Get("/inner", func(c *fiber.Ctx) error {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return fmt.Errorf("a call of our own: %w", ctx.Err())
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET /wait HTTP/1.1\r\nHost: api.test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached its handler")
	}
	_ = conn.Close()
	select {
	case got := <-statuses:
		if got != StatusClientClosedRequest {
			t.Fatalf("a request whose client left was recorded as %d, want %d", got, StatusClientClosedRequest)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not see its client leave")
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("a client that left was logged as an error: %s", logs.String())
	}

	res, err := app.Test(httptest.NewRequest("GET", "/inner", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != 500 || <-statuses != 500 {
		t.Fatalf("a cancellation of the server's own answered %d, want 500", res.StatusCode)
	}
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatal("the server's own cancellation was not logged")
	}
}
