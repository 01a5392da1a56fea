package api

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"broll/clients/go/brollclient"
	"broll/internal/config"
)

// An upload's body is bounded by BROLL_BODY_IDLE_TIMEOUT between two bytes,
// not by the server's 30 s read timeout: a body trickling steadily for over
// a minute arrives whole, one that stalls for longer than the idle timeout
// is cut long before the read timeout would, and headers sent slowly are
// still cut by the read timeout (slowloris).
func TestUploadIdleTimeout(t *testing.T) {
	t.Parallel()
	const idle = 3 * time.Second
	k := newUploadKit(t, false, func(c *config.Config) { c.BodyIdleTimeout = idle })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = k.nodes[0].app.Listener(ln) }()
	t.Cleanup(func() { _ = k.nodes[0].app.Shutdown() })

	// startPut opens a connection and sends a PUT's headers for up.
	startPut := func(t *testing.T, up brollclient.Upload) net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		u, _ := url.Parse(up.Url)
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\nContent-Type: video/webm\r\nContent-Length: %d\r\n\r\n",
			u.RequestURI(), k.ops.Secret, up.Size)
		return conn
	}
	// answer reads the response, giving up at the deadline.
	answer := func(t *testing.T, conn net.Conn, within time.Duration) (int, []byte) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(within))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer within %s: %v", within, err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, raw
	}

	t.Run("a steady trickle for over a minute arrives whole", func(t *testing.T) {
		t.Parallel()
		const chunk, every, chunks = 512, 500 * time.Millisecond, 142 // 71 s
		data := bytes.Repeat([]byte{'t'}, chunk*chunks)
		up := k.newUpload(t, k.ops.Secret, len(data))
		conn := startPut(t, up)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := range chunks {
			if _, err := conn.Write(data[i*chunk : (i+1)*chunk]); err != nil {
				t.Fatalf("the server stopped taking the body after %d bytes: %v", i*chunk, err)
			}
			<-tick.C
		}
		if status, raw := answer(t, conn, 30*time.Second); status != http.StatusNoContent {
			t.Fatalf("slow upload: %d %s", status, raw)
		}
		f, err := k.media.Open(t.Context(), "uploads/"+up.UploadId.String()+"/full.webm")
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(stored, data) {
			t.Fatalf("stored %d bytes, sent %d", len(stored), len(data))
		}
	})

	t.Run("a stall longer than the idle timeout is cut", func(t *testing.T) {
		t.Parallel()
		up := k.newUpload(t, k.ops.Secret, 1<<20)
		conn := startPut(t, up)
		if _, err := conn.Write(bytes.Repeat([]byte{'s'}, 32<<10)); err != nil {
			t.Fatal(err)
		}
		// Well before the 30 s read timeout.
		status, raw := answer(t, conn, 15*time.Second)
		if status != http.StatusBadRequest || !bytes.Contains(raw, []byte(`"code":"invalid_request"`)) {
			t.Fatalf("stalled upload: %d %s", status, raw)
		}
		if r := k.importUpload(t, k.ops.Secret, up.UploadId.String()); r.status != 409 || problemOf(t, r).Code != "upload_incomplete" {
			t.Fatalf("import of the stalled upload: %d %s", r.status, r.raw)
		}
	})

	t.Run("headers sent slowly are still cut by the read timeout", func(t *testing.T) {
		t.Parallel()
		up := k.newUpload(t, k.ops.Secret, 1024)
		u, _ := url.Parse(up.Url)
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: api.test\r\n", u.RequestURI())
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := conn.Write([]byte("X")); err != nil {
						return
					}
				}
			}
		}()
		// The server gives up at its 30 s read timeout: the read ends
		// (an answer or the connection closed) before this deadline.
		_ = conn.SetReadDeadline(time.Now().Add(45 * time.Second))
		_, err = io.ReadAll(conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server still held a connection whose headers never ended")
		}
	})
}
