package brollclient_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"broll/api"
	"broll/billing/billingtest"
	"broll/clients/go/brollclient"
	"broll/internal/config"
	"broll/internal/testkit"
)

// liveNode is an API node on a free loopback port over a fresh database,
// with an account that has credit and clips to buy.
type liveNode struct {
	url     string
	rootKey string
}

func startNode(t *testing.T) liveNode {
	t.Helper()
	pool, dbURL := testkit.NewPool(t)
	rdb, redisURL := testkit.Redis(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": dbURL, "REDIS_URL": redisURL, "BROLL_MEDIA_DIR": t.TempDir(),
			"BROLL_IMPORT_DIR": t.TempDir(), "BROLL_SIGNING_KEY": config.GenerateSecret(), "BROLL_PUBLIC_URL": base,
			"BROLL_EMBED_PROVIDER": "builtin"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	node, err := api.NewNode(context.Background(), cfg, api.NodeOptions{Pool: pool, Redis: rdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	app := node.App
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	acct := billingtest.NewAccount(t, pool, billingtest.AccountOpts{Credits: 100_000})
	billingtest.Videos(t, pool, 3, "easy")
	return liveNode{url: base, rootKey: acct.RootKey.Secret}
}

func bearer(key string) brollclient.ClientOption {
	return brollclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// The generated clients against a live node: search, create a customer key,
// buy with it, list its purchases, revoke it. The Go client here, the
// TypeScript one through node (clients/ts/test/live.mjs).
func TestClientsAgainstALiveNode(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	ctx := context.Background()

	t.Run("go", func(t *testing.T) {
		root, err := brollclient.NewClientWithResponses(n.url, bearer(n.rootKey))
		if err != nil {
			t.Fatal(err)
		}
		limit := brollclient.Limit(5)
		search, err := root.ListVideosWithResponse(ctx, &brollclient.ListVideosParams{Limit: &limit})
		if err != nil || search.JSON200 == nil || len(search.JSON200.Videos) == 0 {
			t.Fatalf("search: %v %s", err, body(search))
		}
		video := search.JSON200.Videos[0].Id
		created, err := root.CreateCustomerKeyWithResponse(ctx, nil, brollclient.KeyCreate{CustomerLabel: "go client"})
		if err != nil || created.JSON201 == nil {
			t.Fatalf("create key: %v %s", err, body(created))
		}
		customer, err := brollclient.NewClientWithResponses(n.url, bearer(created.JSON201.ApiKey))
		if err != nil {
			t.Fatal(err)
		}
		bought, err := customer.PurchaseVideosWithResponse(ctx, nil, brollclient.PurchaseRequest{VideoIds: []uuid.UUID{video}})
		if err != nil || bought.JSON200 == nil || bought.JSON200.Purchases[0].VideoId != video || bought.JSON200.Purchases[0].AlreadyOwned {
			t.Fatalf("purchase: %v %s", err, body(bought))
		}
		listed, err := customer.ListPurchasesWithResponse(ctx, &brollclient.ListPurchasesParams{})
		if err != nil || listed.JSON200 == nil || len(listed.JSON200.Purchases) != 1 || listed.JSON200.Purchases[0].VideoId != video {
			t.Fatalf("list purchases: %v %s", err, body(listed))
		}
		revoked, err := root.RevokeCustomerKeyWithResponse(ctx, &brollclient.RevokeCustomerKeyParams{Id: created.JSON201.Details.Id})
		if err != nil || revoked.StatusCode() != http.StatusOK {
			t.Fatalf("revoke: %v %s", err, body(revoked))
		}
		after, err := customer.GetBalanceWithResponse(ctx)
		if err != nil || after.StatusCode() != http.StatusUnauthorized || after.ApplicationproblemJSON401 == nil {
			t.Fatalf("a revoked key: %v %s", err, body(after))
		}
	})

	t.Run("typescript", func(t *testing.T) {
		dir, err := filepath.Abs("../../ts")
		if err != nil {
			t.Fatal(err)
		}
		npm(t, dir, "ci", "--no-audit", "--no-fund", "--silent")
		npm(t, dir, "run", "--silent", "build")
		cmd := exec.Command("node", "test/live.mjs")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BROLL_URL="+n.url, "BROLL_ROOT_KEY="+n.rootKey)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node test/live.mjs: %v\n%s", err, out)
		}
	})
}

func npm(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %v: %v\n%s", args, err, out)
	}
}

type bodied interface{ StatusCode() int }

func body(r bodied) string {
	if r == nil {
		return "(no response)"
	}
	return fmt.Sprintf("status %d", r.StatusCode())
}
