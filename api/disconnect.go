package api

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// cancelOnDisconnect gives the handler a context (c.UserContext) that is
// cancelled when the client closes its connection, so that the query it
// started is cancelled too (pgx sends Postgres a cancel request when the
// context ends). fasthttp offers no such signal while a handler runs, and
// fiber's user context is never cancelled, so a watcher waits on the socket:
// it peeks (MSG_PEEK, nothing is consumed) when the socket becomes readable;
// zero bytes or a reset means the peer is gone. Bytes mean the client sent
// more (a pipelined request): it is still there, and watching stops. When
// the handler returns, a read deadline in the past wakes the watcher and is
// lifted again before fasthttp reads the next request (it sets its own
// deadlines). Connections that are not sockets (tests' in-memory ones) are
// served without a watcher.
func cancelOnDisconnect(c *fiber.Ctx) error {
	conn := c.Context().Conn()
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return c.Next()
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return c.Next()
	}
	ctx, cancel := context.WithCancel(c.UserContext())
	defer cancel()
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		if peerClosed(raw) {
			cancel()
		}
	}()
	c.SetUserContext(ctx)
	err = c.Next()
	stopWatching(conn, watching)
	return err
}

// stopWatching wakes the watcher and waits for it, leaving the connection's
// read deadline cleared.
func stopWatching(conn net.Conn, watching <-chan struct{}) {
	_ = conn.SetReadDeadline(time.Unix(1, 0))
	<-watching
	_ = conn.SetReadDeadline(time.Time{})
}

// peerClosed blocks until the socket is readable (or its read deadline
// passes) and reports whether the peer closed or reset the connection.
func peerClosed(raw syscall.RawConn) bool {
	var closed bool
	var b [1]byte
	err := raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
			return false // nothing yet: wait until readable
		case rerr != nil:
			closed = errors.Is(rerr, syscall.ECONNRESET)
		default:
			closed = n == 0
		}
		return true
	})
	return err == nil && closed
}
