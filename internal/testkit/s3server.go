package testkit

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"broll/internal/freeport"
)

// S3Server is a versitygw process of the test's own (posix backend in a
// temporary directory) holding one empty bucket.
type S3Server struct {
	Endpoint  string // http://127.0.0.1:port
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	// Dir is the backend directory: the bucket's objects are files under
	// Dir/Bucket.
	Dir string
}

// versitygwPath finds the server: BROLL_TEST_VERSITYGW (written to the
// stack's env file by deploy/local/stack.sh, which builds it), then PATH.
func versitygwPath(t testing.TB) string {
	if p := os.Getenv("BROLL_TEST_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	t.Fatal("versitygw not found: run `bash deploy/local/stack.sh up` (it builds it) and load .stack/env")
	return ""
}

// StartS3 starts versitygw on a free port and stops it when the test ends.
// A port another process took between the choice and the start is retried
// with another.
func StartS3(t testing.TB) *S3Server {
	t.Helper()
	bin := versitygwPath(t)
	s := &S3Server{Bucket: "broll-test", Region: "us-east-1", AccessKey: "testaccess", SecretKey: "testsecret-0123456789", Dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(s.Dir, s.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range 5 {
		port, err := freeport.Pick()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var out bytes.Buffer
		cmd := exec.Command(bin, "--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
			"--port", addr, "--quiet", "posix", s.Dir)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("start versitygw: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if err := waitListening(addr, exited); err != nil {
			_ = cmd.Process.Kill()
			lastErr = fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
			continue
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // "signal: killed", from the Kill above: nothing to report
		})
		s.Endpoint = "http://" + addr
		return s
	}
	t.Fatalf("versitygw did not start: %v", lastErr)
	return nil
}

// waitListening waits until the server answers HTTP or its process ends.
func waitListening(addr string, exited <-chan error) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("versitygw exited: %w", err)
		default:
		}
		if resp, err := client.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("versitygw not answering on %s", addr)
}
