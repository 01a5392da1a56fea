// Package probe answers a container's health check from inside the image:
// the final image has no shell and no curl, so each binary probes its own
// /healthz when started with -healthcheck.
package probe

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Healthz asks http://addr/healthz for a 200; an address without a host
// (":8080") means this machine.
func Healthz(addr string) error {
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	client := &http.Client{Timeout: 2 * time.Second}
	res, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz answered %d", res.StatusCode)
	}
	return nil
}

// Exit runs Healthz and returns the process exit code a health check wants.
func Exit(addr string) int {
	if err := Healthz(addr); err != nil {
		return 1
	}
	return 0
}
