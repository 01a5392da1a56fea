package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
)

// 60 creations fired at once over real HTTP by one root key make exactly
// the limit of endpoints; every other one is a 409 problem saying why.
func TestWebhookLimitHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{perMinute: 1000})
	base := e.serveLoopback(t)
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{})
	const requests, limit = 60, 20
	type answer struct {
		status int
		code   string
	}
	answers := make([]answer, requests)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i), "events": []string{"key.created"}})
			req, _ := http.NewRequest("POST", base+"/api/v1/webhooks", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+acct.RootKey.Secret)
			req.Header.Set("Content-Type", "application/json")
			<-start
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var p brollclient.Problem
			_ = json.Unmarshal(raw, &p) // a success has no code: read as ""
			answers[i] = answer{res.StatusCode, string(p.Code)}
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for _, a := range answers {
		switch {
		case a.status == http.StatusCreated:
			created++
		case a.status == http.StatusConflict && a.code == "conflict":
		default:
			t.Errorf("answer %d %q, want 201 or 409 conflict", a.status, a.code)
		}
	}
	var stored int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, acct.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if created != limit || stored != limit {
		t.Fatalf("%d creations answered 201 and %d endpoints stored, want exactly %d", created, stored, limit)
	}
}
