package marks_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"broll/internal/admission/marks"
	"broll/internal/testkit"
)

// TestOneHoldHoldsEveryMark: a purchase batch holds what each of its
// buyers owns in one call. Every mark named is held (an admission reads
// none of them) and given a new token; the release ends every hold and
// gives each mark another new token, so a copy made before or during the
// change is stale for each buyer, not only the first. A mark not named
// stays as it was.
func TestOneHoldHoldsEveryMark(t *testing.T) {
	ks := testkit.Redis(t)
	ctx := context.Background()
	m := marks.New(ks.Client, ks.Prefix, marks.MarksOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close()
	names := []string{marks.Owned(uuid.New()), marks.Owned(uuid.New()), marks.Owned(uuid.New())}
	other := marks.Owned(uuid.New())
	all := append([]string{other}, names...)
	for _, n := range all {
		if err := ks.Client.Set(ctx, marks.TokenKey(ks.Prefix, n), "before", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	token := func(n string) string {
		t.Helper()
		v, err := ks.Client.Get(ctx, marks.TokenKey(ks.Prefix, n)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	holds := func(n string) int64 {
		t.Helper()
		now := testkit.RedisNow(t, ks.Client)
		c, err := ks.Client.ZCount(ctx, marks.HeldKey(ks.Prefix, n), strconv.FormatInt(now.UnixMilli(), 10), "+inf").Result()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	h := m.Hold(ctx, names...)
	during := map[string]string{}
	for _, n := range names {
		if holds(n) != 1 {
			t.Errorf("%s: %d live holds during the change, want 1", n, holds(n))
		}
		if during[n] = token(n); during[n] == "before" {
			t.Errorf("%s: token unchanged by the hold", n)
		}
	}
	if holds(other) != 0 || token(other) != "before" {
		t.Errorf("a mark not named was held or changed: %d holds, token %q", holds(other), token(other))
	}

	h.Release(ctx)
	seen := map[string]bool{}
	for _, n := range names {
		if holds(n) != 0 {
			t.Errorf("%s: %d live holds after the release", n, holds(n))
		}
		tok := token(n)
		if tok == "before" || tok == during[n] {
			t.Errorf("%s: token %q after the release, want a new one", n, tok)
		}
		if seen[tok] {
			t.Errorf("two marks share the token %q", tok)
		}
		seen[tok] = true
	}
	if token(other) != "before" {
		t.Errorf("a mark not named changed on release: %q", token(other))
	}
}

// TestHoldOfNothing: a batch of quotes holds no mark and makes no call.
func TestHoldOfNothing(t *testing.T) {
	ks := testkit.Redis(t)
	m := marks.New(ks.Client, ks.Prefix, marks.MarksOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close()
	ctx := context.Background()
	m.Hold(ctx).Release(ctx)
	keys, err := ks.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys written by an empty hold: %v", keys)
	}
	var none *marks.Marks
	none.Hold(ctx, marks.Catalog).Release(ctx) // a graph without Redis
}

// TestLapseLeavesTheMarkHeld: a change whose commit is unconfirmed ends
// its hold without a release. The mark stays held, its token the one the
// hold wrote, until HoldFor has passed, as a dead writer's would; a hold
// Redis never took is released instead (there is nothing to lapse).
func TestLapseLeavesTheMarkHeld(t *testing.T) {
	ks := testkit.Redis(t)
	ctx := context.Background()
	m := marks.New(ks.Client, ks.Prefix, marks.MarksOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close()

	h := m.Hold(ctx, marks.Catalog)
	during, err := ks.Client.Get(ctx, marks.TokenKey(ks.Prefix, marks.Catalog)).Result()
	if err != nil {
		t.Fatal(err)
	}
	h.Lapse(ctx)
	now := testkit.RedisNow(t, ks.Client)
	holds, err := ks.Client.ZRangeWithScores(ctx, marks.HeldKey(ks.Prefix, marks.Catalog), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(holds) != 1 {
		t.Fatalf("holds after a lapse: %v, want the one", holds)
	}
	if left := time.Duration(int64(holds[0].Score)-now.UnixMilli()) * time.Millisecond; left < marks.HoldFor-time.Minute || left > marks.HoldFor {
		t.Errorf("the hold lapses in %v, want about %v", left, marks.HoldFor)
	}
	if tok, err := ks.Client.Get(ctx, marks.TokenKey(ks.Prefix, marks.Catalog)).Result(); err != nil || tok != during {
		t.Errorf("token %q (%v) after a lapse, want the hold's %q", tok, err, during)
	}

	// A hold that never reached Redis (its caller's context had ended):
	// the lapse releases it, giving the mark a new token.
	other := marks.Owned(uuid.New())
	if err := ks.Client.Set(ctx, marks.TokenKey(ks.Prefix, other), "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	h = m.Hold(gone, other)
	if tok, _ := ks.Client.Get(ctx, marks.TokenKey(ks.Prefix, other)).Result(); tok != "before" {
		t.Fatalf("a hold under an ended context reached Redis (token %q)", tok)
	}
	h.Lapse(gone)
	if tok, _ := ks.Client.Get(ctx, marks.TokenKey(ks.Prefix, other)).Result(); tok == "before" {
		t.Error("a hold Redis never took was not released by its lapse: the token is unchanged")
	}
}
