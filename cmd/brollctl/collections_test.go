package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/collections"
	"broll/tenancy"
)

// exportOut is what collections export prints.
type exportOut struct {
	KeyID       uuid.UUID  `json:"key_id"`
	AccountID   uuid.UUID  `json:"account_id"`
	Kind        string     `json:"kind"`
	RevokedAt   *time.Time `json:"revoked_at"`
	Collections []struct {
		ID              uuid.UUID   `json:"id"`
		Name            string      `json:"name"`
		Description     *string     `json:"description"`
		ItemCount       int         `json:"item_count"`
		Livemode        bool        `json:"livemode"`
		CreatedAt       time.Time   `json:"created_at"`
		UpdatedAt       time.Time   `json:"updated_at"`
		VideoIDs        []uuid.UUID `json:"video_ids"`
		RetiredVideoIDs []uuid.UUID `json:"retired_video_ids"`
	} `json:"collections"`
}

// TestCollectionsExport: collections export --key prints the collections
// that key made, newest first, each with its clips' ids in the order
// added (retired ones kept and named); a root key's export holds its own,
// not its customers'; a test key's its test ones; a revoked key's while
// they are kept; an unknown or malformed key fails with a message.
func TestCollectionsExport(t *testing.T) {
	t.Parallel()
	c := newCtl(t)
	ctx := context.Background()
	svc := c.graph(t, 0).Collections
	acct := billingtest.NewAccount(t, c.pool, billingtest.AccountOpts{Credits: 1000})
	alice := acct.CustomerKey(t, c.pool, "alice")
	bob := acct.CustomerKey(t, c.pool, "bob")
	tester := acct.TestKey(t, c.pool, "sandbox")
	vids := billingtest.Videos(t, c.pool, 4, "easy")

	create := func(k tenancy.Principal, name string, items ...[]uuid.UUID) uuid.UUID {
		t.Helper()
		col, err := svc.Create(ctx, k, collections.CreateRequest{Name: name})
		if err != nil {
			t.Fatalf("create %q: %v", name, err)
		}
		for _, ids := range items {
			if _, err := svc.AddItems(ctx, k, col.ID, ids); err != nil {
				t.Fatalf("add to %q: %v", name, err)
			}
		}
		return col.ID
	}
	ap := billingtest.Principal(acct, alice)
	cafe := create(ap, "Cafe shots", []uuid.UUID{vids[2], vids[0], vids[1]}, []uuid.UUID{vids[0], vids[3]})
	empty := create(ap, "Empty for now")
	create(billingtest.Principal(acct, bob), "Bob's", []uuid.UUID{vids[0]})
	rootOwn := create(acct.Root, "Root picks", []uuid.UUID{vids[3]})
	sandbox := create(billingtest.Principal(acct, tester), "Sandbox", []uuid.UUID{vids[1]})
	if _, err := c.pool.Exec(ctx, `UPDATE videos SET retired_at = now() WHERE id = $1`, vids[1]); err != nil {
		t.Fatal(err)
	}

	export := func(t *testing.T, key uuid.UUID) exportOut {
		t.Helper()
		raw, err := json.Marshal(c.mustRun(t, "collections", "export", "--key", key.String()))
		if err != nil {
			t.Fatal(err)
		}
		var out exportOut
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("export of %s: %v\n%s", key, err, raw)
		}
		if out.KeyID != key || out.AccountID != acct.ID {
			t.Fatalf("export of %s names key %s of account %s", key, out.KeyID, out.AccountID)
		}
		return out
	}
	ids := func(out exportOut) []uuid.UUID {
		var got []uuid.UUID
		for _, col := range out.Collections {
			got = append(got, col.ID)
		}
		return got
	}

	t.Run("a customer key's collections, newest first, clips in the order added", func(t *testing.T) {
		out := export(t, alice.ID)
		if got := ids(out); !slices.Equal(got, []uuid.UUID{empty, cafe}) {
			t.Fatalf("collections %v, want [%s %s]", got, empty, cafe)
		}
		got := out.Collections[1]
		if got.Name != "Cafe shots" || got.ItemCount != 4 || !got.Livemode ||
			!slices.Equal(got.VideoIDs, []uuid.UUID{vids[2], vids[0], vids[1], vids[3]}) ||
			!slices.Equal(got.RetiredVideoIDs, []uuid.UUID{vids[1]}) {
			t.Fatalf("cafe: %+v", got)
		}
		if e := out.Collections[0]; e.ItemCount != 0 || e.VideoIDs == nil || len(e.VideoIDs) != 0 {
			t.Fatalf("empty collection: %+v", e)
		}
	})
	t.Run("a root key's own, not its customers'", func(t *testing.T) {
		if got := ids(export(t, acct.RootKey.ID)); !slices.Equal(got, []uuid.UUID{rootOwn}) {
			t.Fatalf("root's export %v, want [%s]", got, rootOwn)
		}
	})
	t.Run("a test key's test collections", func(t *testing.T) {
		out := export(t, tester.ID)
		if got := ids(out); !slices.Equal(got, []uuid.UUID{sandbox}) || out.Collections[0].Livemode {
			t.Fatalf("test key's export: %+v", out)
		}
	})
	t.Run("a revoked key's, while they are kept", func(t *testing.T) {
		c.mustRun(t, "key", "revoke", "--id", bob.ID.String())
		out := export(t, bob.ID)
		if len(out.Collections) != 1 || out.RevokedAt == nil || !slices.Equal(out.Collections[0].VideoIDs, []uuid.UUID{vids[0]}) {
			t.Fatalf("revoked key's export: %+v", out)
		}
	})
	t.Run("an unknown or malformed key fails with a message", func(t *testing.T) {
		c.mustFail(t, "key not found", "collections", "export", "--key", uuid.NewString())
		c.mustFail(t, `--key "alice" is not a UUID`, "collections", "export", "--key", "alice")
		if code, _, stderr := c.run(t, "", "collections", "export"); code != 2 || stderr == "" {
			t.Fatalf("no --key: exit %d, %q", code, stderr)
		}
	})
}
