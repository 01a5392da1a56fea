package webhook

import (
	"context"
	"fmt"
	"net"
	"testing"
)

// The failures the tests cannot cause cheaply map to their fixed texts too.
func TestDescribeTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		fmt.Errorf("post: %w", context.DeadlineExceeded):                                      errTextTimeout,
		&net.OpError{Op: "dial", Err: &net.DNSError{IsTimeout: true, Server: "10.0.0.53:53"}}: errTextDNS,
		fmt.Errorf("post: %w", context.Canceled):                                              errTextCancelled,
		fmt.Errorf("something else at 10.1.2.3:8080"):                                         errTextFailed,
	} {
		if got := describe(err); got != want {
			t.Errorf("describe(%v) = %q, want %q", err, got, want)
		}
	}
}
