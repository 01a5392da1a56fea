package main

import (
	"strings"
	"testing"

	"broll/internal/config"
)

// `brollctl migrate` with BROLL_SIGNING_KEY seals the webhook signing
// secrets stored in plaintext before secrets were sealed; without the key
// it leaves them to the worker and says nothing of them.
func TestMigrateSealsPlaintextWebhookSecrets(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	acct := c.mustRun(t, "account", "create", "--name", "Hooks", "--source", "hooks", "--credits", "10")
	const plaintext = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="
	_, err := c.pool.Exec(t.Context(), `WITH e AS (
		INSERT INTO webhook_endpoints (account_id, root_key_id, url, events)
		SELECT k.account_id, k.id, 'https://hooks.example.com/', '{key.created}' FROM api_keys k
		WHERE k.account_id = $1 AND k.kind = 'root' RETURNING id)
		INSERT INTO webhook_secrets (endpoint_id, secret) SELECT id, $2 FROM e`, acct["account_id"], plaintext)
	if err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun(t, "migrate"); out["webhook_secrets_sealed"] != nil {
		t.Fatalf("migrate without the key: %v", out)
	}
	c.env["BROLL_SIGNING_KEY"] = config.GenerateSecret()
	if out := c.mustRun(t, "migrate"); out["webhook_secrets_sealed"] != float64(1) {
		t.Fatalf("migrate with the key: %v, want 1 secret sealed", out)
	}
	var stored string
	if err := c.pool.QueryRow(t.Context(), `SELECT string_agg(secret, ' ') FROM webhook_secrets`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "whsec_") || strings.Contains(stored, strings.TrimPrefix(plaintext, "whsec_")) {
		t.Fatalf("a plaintext secret remains after migrate: %.40s", stored)
	}
}
