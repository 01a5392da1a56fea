package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/catalog/media"
	"broll/embed/embedtest"
	"broll/internal/testkit"
)

// TestDownloadBrokenOff: a client that leaves mid-download is logged with
// the bytes that actually went out, short of the file's length, not with
// the length the response announced.
func TestDownloadBrokenOff(t *testing.T) {
	t.Parallel()
	pool, dbURL := testkit.NewPool(t)
	rds := testkit.Redis(t)
	env := sharedEnv(t, dbURL, rds, embedtest.NewOllama(t, embedtest.Options{}).URL)
	api := startAPI(t, env)
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 5000})
	key := acct.CustomerKey(t, pool, "leaver")
	video := billingtest.Videos(t, pool, 1, "easy")[0]
	store, err := media.NewLocal(env["BROLL_MEDIA_DIR"])
	if err != nil {
		t.Fatal(err)
	}
	// Far more than the loopback socket buffers hold.
	const size = 48 << 20
	if _, err := store.Put(context.Background(), "clips/"+video.String()+"/full.avi", io.LimitReader(zeros{}, size)); err != nil {
		t.Fatal(err)
	}
	r := call(t, api.url, "POST", "/api/v1/broll/purchase", key.Secret, map[string]any{"video_ids": []uuid.UUID{video}})
	if r.status != 200 {
		t.Fatalf("purchase: %d %s", r.status, r.raw)
	}
	line := r.body["purchases"].([]any)[0].(map[string]any)
	link, _ := url.Parse(line["download_url"].(string))

	conn, err := net.Dial("tcp", strings.TrimPrefix(api.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: broll.test\r\nUser-Agent: leaver\r\n\r\n", link.RequestURI())
	br := bufio.NewReader(conn)
	status, _ := br.ReadString('\n')
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("download status line %q", status)
	}
	if _, err := io.CopyN(io.Discard, br, 64<<10); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	var sent int64
	var delivered *int64
	eventually(t, 20*time.Second, "the broken-off download is logged", func() error {
		err := pool.QueryRow(context.Background(),
			`SELECT bytes_sent, bytes_delivered FROM download_log WHERE purchase_id = $1`, line["purchase_id"]).Scan(&sent, &delivered)
		if err != nil {
			return err
		}
		if delivered == nil {
			return fmt.Errorf("bytes_delivered not written yet")
		}
		return nil
	})
	if sent != size || *delivered >= size || *delivered < 64<<10 {
		t.Fatalf("bytes_sent %d, bytes_delivered %d: want %d announced and less delivered", sent, *delivered, size)
	}
	t.Logf("announced %d bytes, delivered %d before the client left", sent, *delivered)
	api.stop(t)
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
