package webhook_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"broll/internal/outbox"
	"broll/webhook"
)

// pgDump is the distribution's pg_dump of the stack's Postgres (15).
const pgDump = "/usr/lib/postgresql/15/bin/pg_dump"

// dump returns the whole test database as pg_dump writes it.
func dump(t *testing.T, url string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(pgDump, "--no-owner", "--dbname", url)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("pg_dump: %v: %s", err, errOut.Bytes())
	}
	return out.Bytes()
}

// secretMaterial is what of a whsec_ secret must not be found in a dump:
// the secret and its base64 key alone.
func secretMaterial(secret string) []string {
	return []string{secret, strings.TrimPrefix(secret, "whsec_")}
}

// Webhook signing secrets are sealed at rest: after endpoints are created
// and rotated, a dump of the database holds none of them (nor any whsec_
// value at all), and the worker still signs with every active secret.
func TestWebhookSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	first, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: rcv.URL, Events: []string{outbox.ClipsEmbedded}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.hooks.Create(ctx, b.owner(), webhook.NewEndpoint{URL: rcv.URL + "/second", Events: []string{outbox.KeyRevoked}})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := b.hooks.Rotate(ctx, b.owner(), first.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d := dump(t, b.url)
	if !bytes.Contains(d, []byte(first.ID.String())) {
		t.Fatal("the dump does not hold the endpoints at all")
	}
	if bytes.Contains(d, []byte("whsec_")) {
		t.Error("the dump holds a whsec_ value")
	}
	for _, s := range []string{first.Secret, second.Secret, rotated.Secret} {
		for _, m := range secretMaterial(s) {
			if bytes.Contains(d, []byte(m)) {
				t.Errorf("the dump holds a signing secret (%.12s...)", m)
			}
		}
	}
	writeEvents(t, b, 1, outbox.ClipsEmbedded)
	b.drain(t, b.deliverer)
	msgs := rcv.messages()
	if len(msgs) != 1 {
		t.Fatalf("receiver got %d messages, want 1", len(msgs))
	}
	verifyWithGo(t, first.Secret, msgs)
	verifyWithGo(t, rotated.Secret, msgs)
}

// A secret stored in plaintext before sealing existed is sealed by
// SealSecrets (the worker runs it when it starts, brollctl migrate when it
// has the key): afterwards no plaintext remains and deliveries are still
// signed with it.
func TestPlaintextSecretsSealedByMigration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	const legacy = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="
	_, err := b.pool.Exec(ctx, `WITH e AS (INSERT INTO webhook_endpoints (account_id, root_key_id, url, events)
		VALUES ($1, $2, $3, '{clips.embedded}') RETURNING id)
		INSERT INTO webhook_secrets (endpoint_id, secret) SELECT id, $4 FROM e`, b.acct.ID, b.acct.RootKey.ID, rcv.URL, legacy)
	if err != nil {
		t.Fatal(err)
	}
	n, err := webhook.SealSecrets(ctx, b.pool, b.sealer)
	if err != nil || n != 1 {
		t.Fatalf("sealed %d (%v), want 1", n, err)
	}
	if n, err := webhook.SealSecrets(ctx, b.pool, b.sealer); err != nil || n != 0 {
		t.Fatalf("second run sealed %d (%v), want 0", n, err)
	}
	d := dump(t, b.url)
	for _, m := range secretMaterial(legacy) {
		if bytes.Contains(d, []byte(m)) {
			t.Fatal("the dump still holds the plaintext secret")
		}
	}
	writeEvents(t, b, 1, outbox.ClipsEmbedded)
	b.drain(t, b.deliverer)
	verifyWithGo(t, legacy, rcv.messages())
}
