package freeport

import (
	"net"
	"strconv"
	"testing"
)

// A port is never handed out twice, even once its first holder has let it
// go: the child it was meant for may not have bound it yet.
func TestPortsAreNeverHandedOutTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 2000 {
		port := Must(t)
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		if port < low || port > high {
			t.Fatalf("port %d outside %d-%d", port, low, high)
		}
		seen[port] = true
	}
}

// A port something listens on is never handed out.
func TestBusyPortsAreSkipped(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	busy := map[int]bool{}
	for port := low; port < low+200; port++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		held = append(held, ln)
		busy[port] = true
	}
	for range 3000 {
		if port := Must(t); busy[port] {
			t.Fatalf("port %d is listened on but was handed out", port)
		}
	}
}
