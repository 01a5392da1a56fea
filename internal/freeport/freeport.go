// Package freeport hands out loopback TCP ports for the servers that tests
// and benchmarks start as child processes (redis-server, sentinels, ollama,
// versitygw, Jaeger), which must be told a port before they bind it.
//
// Asking the kernel for port 0 and closing the listener leaves a window in
// which the kernel may hand the same port to the next caller, or to an
// outgoing connection, before the child binds it: a sentinel stack once got
// one port for two sentinels that way. So ports come from below the kernel's
// ephemeral range, which neither bind(0) nor a connection ever takes, and a
// port is handed out at most once per process.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// The range sits below Linux's default ip_local_port_range (32768-60999).
const (
	low  = 20000
	high = 32767
)

// given holds the ports this process has handed out. It is the one
// process-wide record the package keeps: the port space it guards is the
// machine's, not any caller's.
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Pick returns a loopback port that nothing listens on now and that this
// process has not handed out before.
func Pick() (int, error) {
	given.Lock()
	defer given.Unlock()
	span := high - low + 1
	start := rand.IntN(span)
	for i := range span {
		port := low + (start+i)%span
		if given.ports[port] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		given.ports[port] = true
		return port, nil
	}
	return 0, errors.New("freeport: no free loopback port left in 20000-32767")
}

// TB is the part of testing.TB that Must uses.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Must is Pick for tests: it fails the test when no port is left.
func Must(t TB) int {
	t.Helper()
	port, err := Pick()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
