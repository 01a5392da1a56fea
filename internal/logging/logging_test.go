package logging_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"broll/internal/logging"
)

// TestErrorsLogNoAddresses: an error logged by the service names no host
// or address, even when the driver put them in its text, as pgx does when
// no host of a multi-host DATABASE_URL takes a connection.
func TestErrorsLogNoAddresses(t *testing.T) {
	closed := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	a, b := closed(), closed()
	_, connErr := pgx.Connect(context.Background(),
		fmt.Sprintf("postgres://broll@127.0.0.1:%d,localhost:%d/broll?connect_timeout=1&target_session_attrs=read-write", a, b))
	if connErr == nil {
		t.Fatal("connected to nothing")
	}
	var out bytes.Buffer
	log := logging.New(&out, "info")
	log.Warn("unavailable", "error", connErr.Error(), "path", "/api/v1/balance")
	log.Warn("wrapped", "error", fmt.Errorf("purchase: %w", errors.New("dial tcp [::1]:5432: connect: connection refused")))
	got := out.String()
	for _, leak := range []string{"127.0.0.1", strconv.Itoa(a), strconv.Itoa(b), "localhost", "::1"} {
		if strings.Contains(got, leak) {
			t.Errorf("log names %q:\n%s", leak, got)
		}
	}
	if !strings.Contains(got, "/api/v1/balance") || !strings.Contains(got, "failed to connect") || !strings.Contains(got, "connection refused") {
		t.Errorf("the log lost what it was for:\n%s", got)
	}
}
