package catalog

import (
	"strings"
	"testing"

	"broll/internal/apperr"
	"broll/internal/money"
)

func TestTiers(t *testing.T) {
	t.Parallel()
	b := setup(t)

	tiers, err := b.svc.ListTiers(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tier{{"easy", 500}, {"medium", 1000}, {"hard", 2500}}
	if len(tiers) != len(want) {
		t.Fatalf("tiers = %v", tiers)
	}
	for i := range want {
		if tiers[i] != want[i] {
			t.Fatalf("tiers = %v, want %v", tiers, want)
		}
	}

	got, err := b.svc.SetTier(b.ctx, "premium_4k", 4999)
	if err != nil || got != (Tier{"premium_4k", 4999}) {
		t.Fatalf("SetTier new = %v, %v", got, err)
	}
	if got, err = b.svc.SetTier(b.ctx, "easy", 50); err != nil || got.PriceCents != 50 {
		t.Fatalf("SetTier existing = %v, %v", got, err)
	}
	tiers, _ = b.svc.ListTiers(b.ctx)
	names := []string{}
	for _, t := range tiers {
		names = append(names, t.Name)
	}
	if want := "easy medium hard premium_4k"; strings.Join(names, " ") != want {
		t.Fatalf("order = %q, want %q", strings.Join(names, " "), want)
	}

	for _, tc := range []struct {
		name  string
		price money.Cents
		field string
	}{
		{"", 100, "name"},
		{"Easy", 100, "name"},
		{"1st", 100, "name"},
		{"with-dash", 100, "name"},
		{"a23456789012345678901234567890123", 100, "name"},
		{"ok", -1, "price"},
		{"ok", money.MaxCents + 1, "price"},
	} {
		_, err := b.svc.SetTier(b.ctx, tc.name, tc.price)
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.Invalid || e.Field != tc.field {
			t.Errorf("SetTier(%q, %d) = %v, want invalid %s", tc.name, tc.price, err, tc.field)
		}
	}
}
