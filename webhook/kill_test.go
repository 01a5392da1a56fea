package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"broll/internal/database"
	"broll/internal/outbox"
	"broll/webhook"
)

// killHelperEnv names the database the helper process delivers from.
const killHelperEnv = "BROLL_TEST_WEBHOOK_KILL_DB"

// TestKilledWorkerHelper is the worker that gets killed: it runs only as
// the child process of TestKilledWorkerLosesNothing.
func TestKilledWorkerHelper(t *testing.T) {
	url := os.Getenv(killHelperEnv)
	if url == "" {
		return
	}
	pool, err := database.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	d := webhook.NewDeliverer(pool, testSealer(t), webhook.DelivererOptions{Allow: loopback(t), Lease: time.Second})
	_, _ = d.DeliverDue(context.Background()) // hangs on the receiver until killed
	t.Fatal("the receiver answered the doomed worker")
}

// A worker killed with SIGKILL in the middle of its deliveries loses
// nothing: once their lease ends another worker sends them. Events the
// dead worker had not claimed arrive exactly once; those it was sending may
// arrive twice (at least once), never zero times.
func TestKilledWorkerLosesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var (
		mu       sync.Mutex
		seen     = map[string]int{}
		hung     = make(chan struct{}, 100)
		released = make(chan struct{})
	)
	doomed := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hang := doomed
		if !hang {
			seen[r.Header.Get("webhook-id")]++
		}
		mu.Unlock()
		if hang {
			hung <- struct{}{}
			select { // never answer the doomed worker
			case <-r.Context().Done():
			case <-released:
			}
			return
		}
	}))
	defer srv.Close()
	defer close(released)
	if _, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: srv.URL, Events: []string{outbox.ClipsEmbedded}}); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, b, 20, outbox.ClipsEmbedded)

	child := exec.Command(os.Args[0], "-test.run=^TestKilledWorkerHelper$", "-test.count=1")
	child.Env = append(os.Environ(), killHelperEnv+"="+b.url)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung:
	case <-time.After(30 * time.Second):
		_ = child.Process.Kill()
		t.Fatal("the helper worker sent nothing")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	mu.Lock()
	doomed = false
	mu.Unlock()

	b.drain(t, b.deliverer)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 20 {
		t.Fatalf("%d of 20 events arrived after the kill", len(seen))
	}
	var delivered int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'`).Scan(&delivered); err != nil || delivered != 20 {
		t.Fatalf("%d deliveries delivered, want 20 (%v)", delivered, err)
	}
}
