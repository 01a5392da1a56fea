package tenancy

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/internal/admission"
	"broll/internal/apperr"
	"broll/internal/testkit"
)

// node is one API node's view of keys: its own auth cache and gate over the
// shared Postgres and Redis.
type node struct {
	auth *Authenticator
	gate *admission.Gate
}

func (b *bundle) node() node {
	return node{auth: NewAuthenticator(b.pool, AuthenticatorOptions{CacheTTL: time.Hour}),
		gate: admission.NewGate(b.rdb, b.prefix, b.usage, admission.GateOptions{PerMinute: 60})}
}

// admits authenticates secret from the node's cache, as the API does while
// Redis answers, and asks the gate.
func (n node) admits(t *testing.T, secret string) bool {
	t.Helper()
	ctx := context.Background()
	p, err := n.auth.Authenticate(ctx, secret, true)
	if apperr.CodeOf(err) == apperr.Unauthorized {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := n.gate.Admit(ctx, p.Caller())
	if err != nil {
		t.Fatal(err)
	}
	return !d.Revoked
}

// TestRevokerReachesEveryNode: a key revoked through one node is refused at
// once by another node that holds it in its cache; the row says revoked,
// the marker is in Redis, and a root key takes its customer keys.
func TestRevokerReachesEveryNode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	issue := func(label string) IssuedKey {
		k, err := b.svc.CreateCustomerKey(ctx, root, label, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	gone, kept, sibling := issue("gone"), issue("kept"), issue("sibling")
	a, other := b.node(), b.node()
	for _, n := range []node{a, other} {
		for _, k := range []IssuedKey{gone, kept, sibling} {
			if !n.admits(t, k.Secret) {
				t.Fatalf("%s refused before any revocation", k.Label)
			}
		}
	}
	keyChanges := NewKeyChanges(b.svc, b.rdb, b.prefix, a.auth)

	t.Run("customer key", func(t *testing.T) {
		rev, err := keyChanges.Revoke(ctx, CustomerKeysOf(root), gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rev.Revoked) != 1 || rev.Revoked[0] != gone.ID || rev.Key.RevokedAt == nil {
			t.Fatalf("revocation %+v", rev)
		}
		if other.admits(t, gone.Secret) || a.admits(t, gone.Secret) {
			t.Fatal("revoked key admitted")
		}
		if !other.admits(t, kept.Secret) {
			t.Fatal("another key of the root refused")
		}
		if n, err := b.rdb.Exists(ctx, revokedKey(b.prefix, gone.ID)).Result(); err != nil || n != 1 {
			t.Fatalf("marker: %d %v", n, err)
		}
		k, err := b.svc.GetKey(ctx, gone.ID)
		if err != nil || k.RevokedAt == nil {
			t.Fatalf("row: %+v %v", k, err)
		}
	})

	t.Run("again keeps the first time", func(t *testing.T) {
		first, _ := b.svc.GetKey(ctx, gone.ID)
		rev, err := keyChanges.Revoke(ctx, CustomerKeysOf(root), gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !rev.Key.RevokedAt.Equal(*first.RevokedAt) {
			t.Fatalf("revoked_at moved: %v, then %v", first.RevokedAt, rev.Key.RevokedAt)
		}
	})

	t.Run("out of scope is not found", func(t *testing.T) {
		stranger := b.account(t)
		if _, err := keyChanges.Revoke(ctx, CustomerKeysOf(stranger), kept.ID); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("another account's root: %v", err)
		}
		if _, err := keyChanges.Revoke(ctx, KeysOfAccount(root.AccountID), uuid.New()); apperr.CodeOf(err) != apperr.NotFound {
			t.Fatalf("unknown key: %v", err)
		}
		if !other.admits(t, kept.Secret) {
			t.Fatal("key refused after a refused revocation")
		}
	})

	t.Run("root key takes its customer keys", func(t *testing.T) {
		rev, err := keyChanges.Revoke(ctx, KeysOfAccount(root.AccountID), root.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rev.Revoked) != 4 { // the root and its three customer keys
			t.Fatalf("revoked %v", rev.Revoked)
		}
		if other.admits(t, kept.Secret) || other.admits(t, sibling.Secret) {
			t.Fatal("customer key of a revoked root admitted")
		}
		for _, id := range []uuid.UUID{root.KeyID, kept.ID, sibling.ID} {
			k, err := b.svc.GetKey(ctx, id)
			if err != nil || k.RevokedAt == nil {
				t.Fatalf("row %s: %+v %v", id, k, err)
			}
		}
	})
}

// TestRevokerWithoutRedis: the rows are revoked, the caller is told the
// markers are not written yet (unavailable, worth a retry), and a retry
// writes them.
func TestRevokerWithoutRedis(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	k, err := b.svc.CreateCustomerKey(ctx, root, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	_, err = NewKeyChanges(b.svc, dead, b.prefix, nil).Revoke(ctx, CustomerKeysOf(root), k.ID)
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("revoke without Redis: %v", err)
	}
	if row, err := b.svc.GetKey(ctx, k.ID); err != nil || row.RevokedAt == nil {
		t.Fatalf("row: %+v %v", row, err)
	}
	if _, err := NewKeyChanges(b.svc, b.rdb, b.prefix, nil).Revoke(ctx, CustomerKeysOf(root), k.ID); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n, err := b.rdb.Exists(ctx, revokedKey(b.prefix, k.ID)).Result(); err != nil || n != 1 {
		t.Fatalf("marker after the retry: %d %v", n, err)
	}
}

// TestUnconfirmedRevocationFailsClosed: a revocation whose commit's
// outcome is unknown (the session ended while it committed) answers that
// it could not be confirmed, and the key is refused at once by a node
// that holds it in its cache all the same: the commit may land a moment
// later, and the key must not live on in caches meanwhile. A retry
// finishes the rows.
func TestUnconfirmedRevocationFailsClosed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	k, err := b.svc.CreateCustomerKey(ctx, root, "doomed", nil)
	if err != nil {
		t.Fatal(err)
	}
	other := b.node()
	if !other.admits(t, k.Secret) {
		t.Fatal("refused before any revocation")
	}
	keyChanges := NewKeyChanges(b.svc, b.rdb, b.prefix, nil)
	untrap := testkit.CommitTrap(t, b.pool, "api_keys", testkit.CommitEndsSession)
	_, err = keyChanges.Revoke(ctx, CustomerKeysOf(root), k.ID)
	if err == nil {
		t.Fatal("a revocation whose session ended at commit succeeded")
	}
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Errorf("a revocation whose session ended at commit: %v, want unavailable", err)
	}
	if other.admits(t, k.Secret) {
		t.Error("a node accepted the key from its cache after an unconfirmed revocation")
	}

	untrap()
	rev, err := keyChanges.Revoke(ctx, CustomerKeysOf(root), k.ID)
	if err != nil || rev.Key.RevokedAt == nil {
		t.Fatalf("the retry: %+v %v", rev, err)
	}
}

// TestKeySettingsReachEveryNode: a change of a customer key's settings
// through KeyChanges is seen by another node's next admission of the key
// (its cached copy is stale), and this process's cache forgets the key; a
// key outside the scope is not_found and changes nothing.
func TestKeySettingsReachEveryNode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	root := b.account(t)
	k, err := b.svc.CreateCustomerKey(ctx, root, "limited later", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, other := b.node(), b.node()
	admit := func(n node) admission.Decision {
		t.Helper()
		p, err := n.auth.Authenticate(ctx, k.Secret, true)
		if err != nil {
			t.Fatal(err)
		}
		d, err := n.gate.Admit(ctx, p.Caller())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if admit(a).Stale || admit(other).Stale {
		t.Fatal("stale before any change")
	}
	changes := NewKeyChanges(b.svc, b.rdb, b.prefix, a.auth)
	rate := 7
	changed, err := changes.Update(ctx, CustomerKeysOf(root), k.ID, KeyUpdate{RateLimitSet: true, RateLimit: &rate})
	if err != nil || changed.RateLimitPerMinute == nil || *changed.RateLimitPerMinute != 7 {
		t.Fatalf("update: %+v %v", changed, err)
	}
	if !admit(other).Stale {
		t.Error("another node's cached copy of the key is not stale after the change")
	}
	if p, err := a.auth.Authenticate(ctx, k.Secret, true); err != nil || p.RateLimitPerMinute != 7 {
		t.Errorf("this node still caches the old settings: %+v %v", p, err)
	}

	stranger := b.account(t)
	if _, err := changes.Update(ctx, CustomerKeysOf(stranger), k.ID, KeyUpdate{RateLimitSet: true}); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("another root's change: %v, want not_found", err)
	}
}
